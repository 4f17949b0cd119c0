/**
 * AWS Lambda entry of the disruption-budget controller: an SQS FIFO batch of VMI keys → one
 * reconcile per key → a partial batch response. An adapter only.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { disruptionBudgetController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('disruption-budget');
  return reconcileBatch(event, env, disruptionBudgetController({ expectations: env.state.expectations, log: env.log }), context);
}
