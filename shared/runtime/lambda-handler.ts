/**
 * A controller's AWS Lambda entry, from its definition: `functions/<name>/handler.ts` is
 * `export const handler = lambdaHandler(<definition>)`. The container's environment
 * (lambda-env.ts) becomes the controller's context once per cold start, and so do the deps the
 * definition builds from it (a policy cache, say), so they span invocations; then each SQS FIFO
 * batch → one instrumented reconcile per key → a partial batch response (reconcile-batch.ts).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { connectionFromEnv } from '../kube/connection.ts';
import { createVirtApiClient, virtApiConnection, type VirtApiClient } from '../kube/virt-api.ts';
import { guardedVirtApi } from '../kube/guarded-writes.ts';
import { bindController, type ControllerContext, type ControllerDefinition } from '../reconcile/define-controller.ts';
import type { ControllerSpec } from '../reconcile/instrument.ts';
import { lambdaEnv, type LambdaEnv } from './lambda-env.ts';
import { reconcileBatch } from './reconcile-batch.ts';

export type LambdaHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/** The handler of `def`'s function. */
export function lambdaHandler<D>(def: ControllerDefinition<D>): LambdaHandler {
  let spec: ControllerSpec<D> | undefined;
  return async (event, context) => {
    const env = lambdaEnv(def.name);
    spec ??= bindController(def, lambdaContext(env));
    return reconcileBatch(event, env, spec, context);
  };
}

/** A Lambda container's controller context. */
export function lambdaContext(env: LambdaEnv, vars: NodeJS.ProcessEnv = process.env): ControllerContext {
  return {
    kube: env.kube,
    expectations: env.state.expectations,
    leases: env.state.leases,
    clusterConfig: env.clusterConfig,
    log: env.log,
    now: Date.now,
    metrics: env.metrics,
    // Only the storage controllers call virt-api: the client is made on their first call.
    virtApi: guardedVirtApi(
      lazyVirtApi(() => createVirtApiClient(virtApiConnection(connectionFromEnv(vars), vars))),
      env.cutover ? () => env.cutover!.mode() : undefined,
    ),
  };
}

function lazyVirtApi(make: () => VirtApiClient): VirtApiClient {
  let client: VirtApiClient | undefined;
  return { put: (...args) => (client ??= make()).put(...args) };
}
