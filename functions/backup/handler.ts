/** The backup controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/backup/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { backupController } from './controller.ts';

export const handler = lambdaHandler(backupController);
