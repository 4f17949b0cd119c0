/** The workload-update controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/workload-updater/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { workloadUpdaterController } from './controller.ts';

export const handler = lambdaHandler(workloadUpdaterController);
