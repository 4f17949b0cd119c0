/**
 * AWS Lambda entry of the snapshot controller: an SQS FIFO batch → one reconcile per key → a
 * partial batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 * virt-api's subresources (freeze/unfreeze) are reached through the API server, which aggregates
 * them, unless `VIRT_API_URL` says otherwise.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { connectionFromEnv } from '../../shared/kube/connection.ts';
import { createVirtApiClient, virtApiConnection, type VirtApiClient } from '../../shared/kube/virt-api.ts';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { snapshotController } from './controller.ts';

let virtApi: VirtApiClient | undefined;

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('snapshot');
  // Built once per container, like the SDK clients (its token source renews itself).
  virtApi ??= createVirtApiClient(virtApiConnection(connectionFromEnv(process.env)));
  return reconcileBatch(event, env, snapshotController({ virtApi, log: env.log, metrics: env.metrics }), context);
}
