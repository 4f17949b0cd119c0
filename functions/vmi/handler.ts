/** The VMI controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/vmi/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { vmiController } from './controller.ts';

export const handler = lambdaHandler(vmiController);
