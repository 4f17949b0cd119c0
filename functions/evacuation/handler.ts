/** The evacuation (node drain) controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/evacuation/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { evacuationController } from './controller.ts';

export const handler = lambdaHandler(evacuationController);
