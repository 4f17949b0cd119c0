/** The snapshot controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/snapshot/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { snapshotController } from './controller.ts';

export const handler = lambdaHandler(snapshotController);
