/**
 * AWS Lambda entry of the VM controller: an SQS FIFO batch → one reconcile per key → a partial
 * batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processKeyBatch } from '../../shared/queue/lambda-batch.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { publishEmf } from '../../shared/metrics/emf.ts';
import { vmController } from './controller.ts';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const env = lambdaEnv('vm');
  const spec = vmController({ expectations: env.state.expectations, log: env.log });
  const reconcile = instrumented(spec, env);
  const response = await processKeyBatch(event, {
    controller: 'vm',
    queue: env.queue,
    reconcile,
    onSettled: ({ result }) => env.metrics.inc('reconcile_total', 'Reconciles by result', { controller: 'vm', result }),
  });
  publishEmf(env.metrics, 'VirtReconciler');
  return response;
}
