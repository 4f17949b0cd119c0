/** The node controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/node/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { nodeController } from './controller.ts';

export const handler = lambdaHandler(nodeController);
