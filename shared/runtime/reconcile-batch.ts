/**
 * The body every controller's Lambda handler shares: the SQS FIFO batch → one instrumented
 * reconcile per key → settle each key → the batch's trace entries as one write → a partial batch
 * response, then the invocation's metrics as CloudWatch EMF
 * (namespace from POWERTOOLS_METRICS_NAMESPACE, set by the CDK stack).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { publishEmf } from '../metrics/emf.ts';
import { workqueueRetry } from '../metrics/kubevirt/workqueue.ts';
import { batchConcurrencyFromEnv } from '../queue/batch-concurrency.ts';
import { processKeyBatch } from '../queue/lambda-batch.ts';
import { flushTraces, instrumented, type ControllerSpec } from '../reconcile/instrument.ts';
import { TraceBuffer } from '../state/traces.ts';
import type { LambdaEnv } from './lambda-env.ts';

/** The CloudWatch namespace when POWERTOOLS_METRICS_NAMESPACE is unset (infra/aws/settings.ts uses the same default). */
export const DEFAULT_METRICS_NAMESPACE = 'VirtReconciler';

/**
 * `context` is the invocation's: with it a batch starts no key it has no time left for (the keys
 * of a batch run one after another by default; shared/queue/lambda-batch.ts `remainingMs`).
 */
export async function reconcileBatch<D>(event: SQSEvent, env: LambdaEnv, spec: ControllerSpec<D>, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> {
  const { controller } = spec;
  // Every key's trace entry goes into one buffer, written as one item before the batch is answered.
  const traces = new TraceBuffer(env.state.traces);
  const maxInFlight = batchConcurrencyFromEnv(process.env);
  const response = await processKeyBatch(event, {
    controller,
    ...(maxInFlight !== undefined ? { maxInFlight } : {}),
    ...(context ? { remainingMs: () => context.getRemainingTimeInMillis() } : {}),
    queue: env.queue,
    reconcile: instrumented(spec, { ...env, traces, fences: env.state.expectations }),
    onSettled: ({ result }) => {
      env.metrics.inc('reconcile_total', 'Reconciles by result', { controller, result });
      if (result === 'retrying') workqueueRetry(env.metrics, controller);
    },
  });
  await flushTraces(traces, controller, env.log);
  publishEmf(env.metrics, process.env.POWERTOOLS_METRICS_NAMESPACE ?? DEFAULT_METRICS_NAMESPACE);
  return response;
}

