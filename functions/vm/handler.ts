/**
 * AWS Lambda entry of the VM controller: an SQS FIFO batch → one reconcile per key → a partial
 * batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { vmController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('vm');
  return reconcileBatch(event, env, vmController({ expectations: env.state.expectations, log: env.log }), context);
}
