/**
 * AWS Lambda entry of the node controller: an SQS FIFO batch of node names → one reconcile per
 * node → a partial batch response. The once-a-minute re-check is the reconcile's requeue-after,
 * i.e. a message on the durable timer queue, never a function that waits.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { nodeController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('node');
  return reconcileBatch(event, env, nodeController({ leases: env.state.leases, log: env.log }), context);
}
