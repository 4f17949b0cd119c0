/**
 * API calls per reconcile (docs/architecture.md §3: reads are the cost that grows with scale). A reconcile
 * makes a fresh {@link ApiCallCounter}, wraps the shared client with {@link countingKubeClient},
 * and logs/exports `counter.total()` and `counter.byCall()` when it is done. Failed calls count
 * too: they cost the apiserver as much.
 */
import { EVENTS, PODS, type Resource } from '../api/resources.ts';
import { KUBE_VERBS, type KubeClient } from './client.ts';
import type { Verb } from './errors.ts';
import { apiWriteOf, WRITE_VERBS, type ApiWrite } from './api-write.ts';

/** Counts requests by verb and plural resource, and keeps the writes in order (for the reconcile's trace). */
export class ApiCallCounter {
  readonly #counts = new Map<string, number>();
  readonly #writes: ApiWrite[] = [];

  /** Records one request. */
  count(verb: Verb, resource: string): void {
    const key = `${verb} ${resource}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** All requests so far. */
  total(): number {
    let sum = 0;
    for (const n of this.#counts.values()) sum += n;
    return sum;
  }

  /** Requests with one verb (e.g. reads = `get` + `list`). */
  ofVerb(...verbs: Verb[]): number {
    let sum = 0;
    for (const [key, n] of this.#counts) if (verbs.some((v) => key.startsWith(`${v} `))) sum += n;
    return sum;
  }

  /** Records the answer to one write. */
  recordWrite(write: ApiWrite): void {
    this.#writes.push(write);
  }

  /** The writes made so far, in the order they were made, with the apiserver's answers. */
  writes(): readonly ApiWrite[] {
    return this.#writes;
  }

  /** `{ "get virtualmachineinstances": 1, "list pods": 1, … }`, keys sorted. */
  byCall(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}

/**
 * The counter key of one call: its verb and the resource's plural (`…/scale` for the scale
 * subresource; status writes count as writes of the resource, as the apiserver's audit does).
 */
export function callOf(method: keyof KubeClient, args: readonly unknown[]): readonly [Verb, string] {
  if (method === 'createEvent') return ['create', EVENTS.plural];
  if (method === 'evict') return ['create', `${PODS.plural}/eviction`];
  const res = args[0] as Resource;
  if (method === 'getScale') return ['get', `${res.plural}/scale`];
  if (method === 'updateScale') return ['patch', `${res.plural}/scale`];
  return [method, res.plural];
}

/** `inner` with every call counted in `counter`. The wrapper holds no other state. */
export function countingKubeClient(inner: KubeClient, counter: ApiCallCounter): KubeClient {
  return decorateKubeClient(inner, (method, args, call) => {
    const [verb, resource] = callOf(method, args);
    counter.count(verb, resource);
    if (!WRITE_VERBS.has(verb)) return call();
    return call().then(
      (result) => {
        counter.recordWrite(apiWriteOf(verb, resource, args, { result }));
        return result;
      },
      (error: unknown) => {
        counter.recordWrite(apiWriteOf(verb, resource, args, { error }));
        throw error;
      },
    );
  });
}

/**
 * `inner` with every verb passed through `around(method, args, call)`: the one place wrappers
 * (counters, timers, the chaos suite's killer) hook into a client.
 */
export function decorateKubeClient(
  inner: KubeClient,
  around: (method: keyof KubeClient, args: readonly unknown[], call: () => Promise<unknown>) => Promise<unknown>,
): KubeClient {
  const wrapped: Partial<Record<keyof KubeClient, unknown>> = {};
  for (const method of KUBE_VERBS) {
    // Looked up at each call, not once: a client whose methods are replaced in place later (a
    // benchmark's timer) is still the one called.
    wrapped[method] = (...args: unknown[]) => around(method, args, () => (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args));
  }
  return wrapped as KubeClient;
}
