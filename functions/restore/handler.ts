/** The restore controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/restore/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { restoreController } from './controller.ts';

export const handler = lambdaHandler(restoreController);
