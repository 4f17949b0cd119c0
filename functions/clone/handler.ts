/**
 * AWS Lambda entry of the VirtualMachineClone controller: an SQS FIFO batch → one reconcile per
 * key → a partial batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { cloneController } from './controller.ts';

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('clone');
  return reconcileBatch(event, env, cloneController({ log: env.log }), context);
}
