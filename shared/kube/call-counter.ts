/**
 * API calls per reconcile (DESIGN.md §3: reads are the cost that grows with scale). A reconcile
 * makes a fresh {@link ApiCallCounter}, wraps the shared client with {@link countingKubeClient},
 * and logs/exports `counter.total()` and `counter.byCall()` when it is done. Failed calls count
 * too: they cost the apiserver as much.
 */
import { VMIS, VMS, MIGRATIONS, KUBEVIRTS, DATA_VOLUMES, PODS, PVCS, EVENTS, MIGRATION_POLICIES } from '../api/resources.ts';
import type { KubeClient } from './client.ts';
import type { Verb } from './errors.ts';
import { apiWriteOf, WRITE_VERBS, type ApiWrite } from './api-write.ts';
import { NAMESPACES, NODES } from './requests.ts';

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

/** Which verb and resource each facade method is; checked complete against KubeClient at compile time. */
export const CALLS = {
  getVMI: ['get', VMIS.plural],
  getVM: ['get', VMS.plural],
  getMigration: ['get', MIGRATIONS.plural],
  getKubeVirt: ['get', KUBEVIRTS.plural],
  getDataVolume: ['get', DATA_VOLUMES.plural],
  getPod: ['get', PODS.plural],
  getPVC: ['get', PVCS.plural],
  getNamespace: ['get', NAMESPACES.plural],
  getNode: ['get', NODES.plural],
  listPods: ['list', PODS.plural],
  listMigrations: ['list', MIGRATIONS.plural],
  listKubeVirts: ['list', KUBEVIRTS.plural],
  listMigrationPolicies: ['list', MIGRATION_POLICIES.plural],
  createPod: ['create', PODS.plural],
  deletePod: ['delete', PODS.plural],
  patchPod: ['patch', PODS.plural],
  createVMI: ['create', VMIS.plural],
  updateVMI: ['update', VMIS.plural],
  patchVMI: ['patch', VMIS.plural],
  deleteVMI: ['delete', VMIS.plural],
  createVM: ['create', VMS.plural],
  updateVM: ['update', VMS.plural],
  patchVM: ['patch', VMS.plural],
  createMigration: ['create', MIGRATIONS.plural],
  updateMigration: ['update', MIGRATIONS.plural],
  patchMigration: ['patch', MIGRATIONS.plural],
  deleteMigration: ['delete', MIGRATIONS.plural],
  createDataVolume: ['create', DATA_VOLUMES.plural],
  createEvent: ['create', EVENTS.plural],
} as const satisfies Record<keyof KubeClient, readonly [Verb, string]>;

/** `inner` with every call counted in `counter`. The wrapper holds no other state. */
export function countingKubeClient(inner: KubeClient, counter: ApiCallCounter): KubeClient {
  const wrapped: Partial<Record<keyof KubeClient, unknown>> = {};
  for (const method of Object.keys(CALLS) as Array<keyof KubeClient>) {
    const [verb, resource] = CALLS[method];
    const fn = inner[method] as (...args: unknown[]) => Promise<unknown>;
    wrapped[method] = (...args: unknown[]) => {
      counter.count(verb, resource);
      if (!WRITE_VERBS.has(verb)) return fn.apply(inner, args);
      return fn.apply(inner, args).then(
        (result) => {
          counter.recordWrite(apiWriteOf(verb, resource, args, { result }));
          return result;
        },
        (error: unknown) => {
          counter.recordWrite(apiWriteOf(verb, resource, args, { error }));
          throw error;
        },
      );
    };
  }
  return wrapped as KubeClient;
}
