/**
 * AWS Lambda entry of the restore controller: an SQS FIFO batch → one reconcile per key → a
 * partial batch response. An adapter only (STYLE.md §1). virt-api's VM `stop` (StopTarget) is
 * reached through the API server unless `VIRT_API_URL` says otherwise.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { connectionFromEnv } from '../../shared/kube/connection.ts';
import { createVirtApiClient, virtApiConnection, type VirtApiClient } from '../../shared/kube/virt-api.ts';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { restoreController } from './controller.ts';

let virtApi: VirtApiClient | undefined;

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('restore');
  virtApi ??= createVirtApiClient(virtApiConnection(connectionFromEnv(process.env)));
  return reconcileBatch(event, env, restoreController({ virtApi, log: env.log }), context);
}
