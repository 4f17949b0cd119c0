/**
 * The pool's expectations (reference §0), in the state table: VM creations and deletions per pool
 * key. KubeVirt lowers them from informer events; a stateless function lowers them from what its
 * reads show — a VM we created is observed once a read lists it, one we deleted once a read shows
 * it gone or terminating (it then counts as a removal in `diff`, so the pool cannot delete a
 * second VM in its place). A pass whose read lags behind its own earlier writes therefore waits
 * (after one quorum re-read) instead of acting twice.
 */
import type { VirtualMachine } from '../../shared/api/index.ts';
import { expectationsGate as gate, isPending, type GateResult } from '../../shared/reconcile/expectations-gate.ts';
import { isDeleting } from './delete-selection.ts';
import { CREATION_EXPECTATIONS, DELETION_EXPECTATIONS, type PoolDeps } from './deps.ts';

/** The key a VM deletion is tracked by: `namespace/name/uid`. */
export function deletionKey(vm: VirtualMachine): string {
  return `${vm.metadata?.namespace ?? ''}/${vm.metadata?.name ?? ''}/${vm.metadata?.uid ?? ''}`;
}

/** Lowers what `vms` (every VM of the namespace) shows was done; true when nothing is left to see. */
async function lower(key: string, vms: readonly VirtualMachine[], deps: PoolDeps): Promise<boolean> {
  const e = deps.expectations;
  const now = deps.now();
  const byName = new Map(vms.map((vm) => [`${vm.metadata?.namespace ?? ''}/${vm.metadata?.name ?? ''}`, vm]));
  const creations = await e.get(CREATION_EXPECTATIONS, key);
  if (isPending(creations, now)) {
    for (const k of creations.deleteKeys) if (byName.has(k)) await e.deletionObserved(CREATION_EXPECTATIONS, key, k);
  }
  const deletions = await e.get(DELETION_EXPECTATIONS, key);
  if (isPending(deletions, now)) {
    for (const k of deletions.deleteKeys) {
      const vm = byName.get(k.slice(0, k.lastIndexOf('/')));
      if (!vm || deletionKey(vm) !== k || isDeleting(vm)) await e.deletionObserved(DELETION_EXPECTATIONS, key, k);
    }
  }
  return (await e.satisfied(CREATION_EXPECTATIONS, key, now)) && (await e.satisfied(DELETION_EXPECTATIONS, key, now));
}

/** Gates the pass (shared/reconcile/expectations-gate.ts); `reobserve` makes a quorum read when the first read leaves doubt. */
export function expectationsGate<O extends { readonly allVms: readonly VirtualMachine[] }>(key: string, observed: O, deps: PoolDeps, reobserve: () => Promise<O>): Promise<GateResult<O>> {
  return gate({ key, scopes: [CREATION_EXPECTATIONS, DELETION_EXPECTATIONS], what: 'pool', reobserve, lower: (o) => lower(key, o.allVms, deps) }, observed, deps);
}

/** Records VMs about to be created (added to what is still pending). */
export async function expectCreations(key: string, names: readonly string[], deps: PoolDeps): Promise<void> {
  await expectKeys(CREATION_EXPECTATIONS, key, names, deps);
}
/**
 * Records VMs about to be deleted, only if no deletion is pending: of two workers racing on one
 * pool (a redelivery while a pass still runs), one deletes. Without it, two passes reading the
 * same four VMs under the Random policy could each delete a different two. False to the loser.
 */
export async function claimDeletions(key: string, vms: readonly VirtualMachine[], deps: PoolDeps): Promise<boolean> {
  const now = deps.now();
  // The conditional write is the claim; the key set replaces it at once.
  if (!(await deps.expectations.tryExpectCreations(DELETION_EXPECTATIONS, key, 1, now))) return false;
  await deps.expectations.expectDeletions(DELETION_EXPECTATIONS, key, vms.map(deletionKey), now);
  return true;
}

async function expectKeys(scope: string, key: string, keys: readonly string[], deps: PoolDeps): Promise<void> {
  const now = deps.now();
  const current = await deps.expectations.get(scope, key);
  // Kept, not replaced: names a racing pass recorded are still to be seen.
  const still = isPending(current, now) ? current.deleteKeys : [];
  await deps.expectations.expectDeletions(scope, key, [...new Set([...still, ...keys])], now);
}

/** A write that failed will never be observed: stop waiting for it. */
export async function creationFailed(key: string, name: string, deps: PoolDeps): Promise<void> {
  await deps.expectations.deletionObserved(CREATION_EXPECTATIONS, key, name);
}

export async function deletionFailed(key: string, vm: VirtualMachine, deps: PoolDeps): Promise<void> {
  await deps.expectations.deletionObserved(DELETION_EXPECTATIONS, key, deletionKey(vm));
}

/** Drops both records (the pool is gone). */
export async function forget(key: string, deps: PoolDeps): Promise<void> {
  await deps.expectations.delete(CREATION_EXPECTATIONS, key);
  await deps.expectations.delete(DELETION_EXPECTATIONS, key);
}
