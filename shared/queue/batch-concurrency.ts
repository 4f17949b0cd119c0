/**
 * How many keys of one Lambda batch reconcile at once: the CDK stack sets KEY_BATCH_CONCURRENCY
 * from `-c batchConcurrency` (infra/aws/settings.ts, default 1) and the handler reads it here.
 */
/** The environment variable that bounds the keys of a batch reconciled at once (infra/aws/reconcile-function.ts sets it). */
export const BATCH_CONCURRENCY_ENV = 'KEY_BATCH_CONCURRENCY';

/** KEY_BATCH_CONCURRENCY: unset → every key of a batch at once; else an integer 1–10. */
export function batchConcurrencyFromEnv(env: Record<string, string | undefined>): number | undefined {
  const raw = env[BATCH_CONCURRENCY_ENV];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new Error(`${BATCH_CONCURRENCY_ENV}=${JSON.stringify(raw)}: expected an integer from 1 to 10 (keys of a batch reconciled at once), or unset for all of them`);
  return n;
}
