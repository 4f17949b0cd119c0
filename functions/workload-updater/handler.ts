/**
 * AWS Lambda entry of the workload-update controller: an SQS FIFO batch (the KubeVirt CR's key)
 * → one reconcile → a partial batch response. Its re-runs and eviction batches are durable
 * timers and leases in the state table, never a function that waits.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { workloadUpdaterController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('workload-updater');
  return reconcileBatch(event, env, workloadUpdaterController({ expectations: env.state.expectations, leases: env.state.leases, clusterConfig: env.clusterConfig, log: env.log, metrics: env.metrics }), context);
}
