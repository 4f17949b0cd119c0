/** The clone controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/clone/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { cloneController } from './controller.ts';

export const handler = lambdaHandler(cloneController);
