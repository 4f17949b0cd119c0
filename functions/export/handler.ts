/** The export controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/export/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { exportController } from './controller.ts';

export const handler = lambdaHandler(exportController);
