/** The migration controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/migration/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { migrationController } from './controller.ts';

export const handler = lambdaHandler(migrationController);
