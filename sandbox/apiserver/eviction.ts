/**
 * `POST pods/{name}/eviction` (policy/v1 Eviction), what `kubectl drain` uses: the pod is
 * deleted with the eviction's DeleteOptions unless that would break its PodDisruptionBudget
 * (429 TooManyRequests with a `DisruptionBudget` cause, as upstream). Terminal, pending and
 * already-deleting pods ignore budgets; a pod selected by more than one budget is a 500.
 *
 * Admission: hooks registered with {@link EvictionHooks.add} run before any of that, in order,
 * with the pod as stored; a hook refuses an eviction by throwing an {@link ApiError} (virt-api's
 * eviction webhook answers 429 for a migratable VMI's launcher pod and marks the VMI for
 * migration — it writes through the store itself).
 */
import type { Core, Scope } from './core.ts';
import { deleteObject, parseDeleteOptions } from './deletion.ts';
import { budgetsFor, syncBudgets } from './disruption.ts';
import { ApiError, badRequest, notFound } from './errors.ts';
import { clone, isObject, type KubeObject } from './types.ts';

/** What an eviction admission hook sees. */
export interface EvictionRequest {
  /** The pod as stored (a copy). */
  pod: KubeObject;
  /** The Eviction body (JSON, or decoded from protobuf). */
  eviction: Record<string, unknown>;
  identity: string;
  dryRun: boolean;
}

/** Refuses an eviction by throwing an ApiError; returning lets it proceed. */
export type EvictionHook = (core: Core, request: EvictionRequest) => void;

/** The registered eviction admission hooks. */
export class EvictionHooks {
  private readonly hooks: EvictionHook[] = [];

  /** Adds a hook; returns the function that removes it. */
  add(hook: EvictionHook): () => void {
    this.hooks.push(hook);
    return () => {
      const at = this.hooks.indexOf(hook);
      if (at >= 0) this.hooks.splice(at, 1);
    };
  }

  /** Runs every hook in order (the first to throw wins). */
  admit(core: Core, request: EvictionRequest): void {
    for (const h of this.hooks) h(core, request);
  }
}

function budgetBlocked(message: string, cause: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', message, { causes: [{ reason: 'DisruptionBudget', message: cause }], retryAfterSeconds });
}

const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

/** Checks the pod's budget (if any); throws when the eviction would break it. */
function checkBudget(core: Core, pod: KubeObject): void {
  const status = isObject(pod.status) ? pod.status : {};
  // Upstream lets these through without consulting budgets: nothing healthy is lost.
  if (status.phase === 'Succeeded' || status.phase === 'Failed' || status.phase === 'Pending' || pod.metadata.deletionTimestamp) return;
  syncBudgets(core, pod.metadata.namespace!);
  const budgets = budgetsFor(core, pod);
  if (budgets.length === 0) return;
  if (budgets.length > 1) throw new ApiError(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  const pdb = budgets[0]!;
  const st = isObject(pdb.status) ? pdb.status : {};
  if (typeof st.observedGeneration !== 'number' || st.observedGeneration < (pdb.metadata.generation ?? 1)) {
    throw budgetBlocked(VIOLATION, `The disruption budget ${pdb.metadata.name} is still being processed by the server.`, 10);
  }
  if (typeof st.disruptionsAllowed === 'number' && st.disruptionsAllowed <= 0) {
    throw budgetBlocked(VIOLATION, `The disruption budget ${pdb.metadata.name} needs ${Number(st.desiredHealthy ?? 0)} healthy pods and has ${Number(st.currentHealthy ?? 0)} currently`, 0);
  }
}

/** Serves one eviction; returns the Success Status (201). */
export function evictPod(core: Core, hooks: EvictionHooks, scope: Scope, name: string, body: unknown): object {
  if (!isObject(body)) throw badRequest('the body of the request was not a policy/v1 Eviction object');
  const md = isObject(body.metadata) ? body.metadata : {};
  if (md.name !== undefined && md.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  if (md.namespace !== undefined && md.namespace !== '' && md.namespace !== scope.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const stored = core.store.peek(scope.res, scope.namespace, name);
  if (!stored) throw notFound(scope.res, name);
  const options = isObject(body.deleteOptions) ? body.deleteOptions : {};
  const dryRun = scope.dryRun || (Array.isArray(options.dryRun) && options.dryRun.includes('All'));
  hooks.admit(core, { pod: clone(stored), eviction: clone(body), identity: scope.identity, dryRun });
  checkBudget(core, stored);
  deleteObject(core, { ...scope, dryRun }, name, parseDeleteOptions(new URLSearchParams(), options));
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}
