/**
 * The body every controller's Lambda handler shares: the SQS FIFO batch → one instrumented
 * reconcile per key → settle each key → a partial batch response, then the invocation's metrics
 * as CloudWatch EMF (namespace from POWERTOOLS_METRICS_NAMESPACE, set by the CDK stack).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { publishEmf } from '../metrics/emf.ts';
import { processKeyBatch } from '../queue/lambda-batch.ts';
import { instrumented, type ControllerSpec } from '../reconcile/instrument.ts';
import type { LambdaEnv } from './lambda-env.ts';

/** The CloudWatch namespace when POWERTOOLS_METRICS_NAMESPACE is unset (infra/aws/settings.ts uses the same default). */
export const DEFAULT_METRICS_NAMESPACE = 'VirtReconciler';

export async function reconcileBatch<D>(event: SQSEvent, env: LambdaEnv, spec: ControllerSpec<D>): Promise<SQSBatchResponse> {
  const { controller } = spec;
  const response = await processKeyBatch(event, {
    controller,
    queue: env.queue,
    reconcile: instrumented(spec, { ...env, traces: env.state.traces }),
    onSettled: ({ result }) => env.metrics.inc('reconcile_total', 'Reconciles by result', { controller, result }),
  });
  publishEmf(env.metrics, process.env.POWERTOOLS_METRICS_NAMESPACE ?? DEFAULT_METRICS_NAMESPACE);
  return response;
}
