/**
 * AWS Lambda entry of the migration controller: an SQS FIFO batch → one reconcile per key → a
 * partial batch response. An adapter only (STYLE.md §1): everything else lives in reconcile.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import { migrationController } from './controller.ts';
import type { PolicySource } from './deps.ts';
import { cachedPolicySource } from './policy-source.ts';

// Once per cold start, like lambdaEnv: its 5 s cache then spans invocations.
let policySource: PolicySource | undefined;

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const env = lambdaEnv('migration');
  policySource ??= cachedPolicySource(env.kube);
  const spec = migrationController({ expectations: env.state.expectations, leases: env.state.leases, clusterConfig: env.clusterConfig, policySource, log: env.log });
  return reconcileBatch(event, env, spec, context);
}
