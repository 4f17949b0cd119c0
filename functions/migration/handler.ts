/**
 * AWS Lambda entry of the migration controller: an SQS FIFO batch → one reconcile per key → a
 * partial batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processKeyBatch } from '../../shared/queue/lambda-batch.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { publishEmf } from '../../shared/metrics/emf.ts';
import { migrationController } from './controller.ts';
import type { PolicySource } from './deps.ts';
import { cachedPolicySource } from './policy-source.ts';

// Once per cold start, like lambdaEnv: its 5 s cache then spans invocations.
let policySource: PolicySource | undefined;

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const env = lambdaEnv('migration');
  policySource ??= cachedPolicySource(env.kube);
  const spec = migrationController({ expectations: env.state.expectations, leases: env.state.leases, clusterConfig: env.clusterConfig, policySource, log: env.log });
  const reconcile = instrumented(spec, env);
  const response = await processKeyBatch(event, {
    controller: 'migration',
    queue: env.queue,
    reconcile,
    onSettled: ({ result }) => env.metrics.inc('reconcile_total', 'Reconciles by result', { controller: 'migration', result }),
  });
  publishEmf(env.metrics, 'VirtReconciler');
  return response;
}
