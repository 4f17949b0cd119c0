/**
 * AWS Lambda entry of the evacuation controller: an SQS FIFO batch of node names → one reconcile
 * per node → a partial batch response. An adapter only: everything else lives in reconcile.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { evacuationController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('evacuation');
  return reconcileBatch(event, env, evacuationController({ expectations: env.state.expectations, clusterConfig: env.clusterConfig, log: env.log }), context);
}
