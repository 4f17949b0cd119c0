/** The VM pool controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/pool/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { poolController } from './controller.ts';

export const handler = lambdaHandler(poolController);
