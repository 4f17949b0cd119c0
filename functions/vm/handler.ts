/** The VM controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/vm/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { vmController } from './controller.ts';

export const handler = lambdaHandler(vmController);
