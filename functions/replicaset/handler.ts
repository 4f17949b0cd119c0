/**
 * AWS Lambda entry of the VMI replica set controller: an SQS FIFO batch → one reconcile per key →
 * a partial batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { replicaSetController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('replicaset');
  return reconcileBatch(event, env, replicaSetController({ expectations: env.state.expectations, log: env.log }), context);
}
