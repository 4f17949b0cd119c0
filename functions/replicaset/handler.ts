/** The VMI replica set controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/replicaset/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { replicaSetController } from './controller.ts';

export const handler = lambdaHandler(replicaSetController);
