/** The disruption-budget controller's AWS Lambda entry (scripts/build.ts bundles it as `dist/disruption-budget/index.mjs`). */
import { lambdaHandler } from '../../shared/runtime/lambda-handler.ts';
import { disruptionBudgetController } from './controller.ts';

export const handler = lambdaHandler(disruptionBudgetController);
