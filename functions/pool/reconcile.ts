/**
 * KubeVirt's VirtualMachinePool controller as one stateless reconcile (reference §2.2):
 * observe (the pool; the namespace's VMs, VMIs and revisions) → expectations gate → autoheal →
 * release VMs that left the selector → the pool finalizer → scale, then update, then prune
 * revisions (each only once the step before is stable) — or, for a deleting pool, let its VMs and
 * itself go → status through `/status`.
 */
import type { VirtualMachine, VirtualMachinePool } from '../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VM_POOLS } from '../../shared/api/resources.ts';
import { errorText, InvalidInputError, TransientError } from '../../shared/errors.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { selectorMatches, validateSelector } from '../../shared/predicates/label-selector.ts';
import { controllerOf } from '../../shared/predicates/owner-refs.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { healingCandidates } from './autoheal.ts';
import { isDeleting, selectForDeletion } from './delete-selection.ts';
import type { PoolDeps } from './deps.ts';
import { poolEvent } from './events.ts';
import { expectationsGate, forget } from './expectations.ts';
import { observe, type Observed } from './observed.ts';
import { addFinalizerOps, releaseOps, removeFinalizerOps } from './patches.ts';
import { computePoolStatus } from './pool-status.ts';
import { isPoolControlled, prunableRevisions, semanticallyEqual } from './revisions.ts';
import { deleteVms, scale } from './scale.ts';
import { patchFresh } from './state-preservation.ts';
import { update } from './update.ts';
import { KIND_POOL, POOL_FINALIZER, RETRY_DELAY_SECONDS, type SyncError } from './well-known.ts';
import { writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

/** Reconciles the pool named by `key` (`namespace/name`). */
export async function reconcilePool(key: string, deps: PoolDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;

  // observe
  let pool = await deps.kube.get(VM_POOLS, namespace, name, { resourceVersion: rv });
  if (!pool) {
    await forget(key, deps);
    return done;
  }
  const invalid = selectorProblem(pool);
  if (invalid) {
    // Nothing a retry could fix; the webhook refuses such pools, so this is a bypassed one.
    deps.log.warn('pool selector unusable, not reconciling', { key, problem: invalid });
    return done;
  }
  const p = pool;
  const gate = await expectationsGate(key, await observe(p, deps, rv), deps, () => observe(p, deps, undefined));
  const o = gate.observed;
  let satisfied = gate.kind === 'pass';

  // autoheal: before pause, deletion and the gate, as upstream
  if (pool.spec.autohealing && (await autoheal(key, o, deps))) satisfied = false;

  // release VMs that no longer match; keep the pool's own (deleting ones included)
  const vms = await claimVms(o, deps);

  // the pool finalizer, even when paused
  if (!isDeleting(pool)) {
    const written = await ensureFinalizer(pool, deps);
    if (!written) return done;
    pool = written;
  }

  // scale → update → prune, each once the step before is stable; or let a deleting pool go
  let syncError: SyncError | undefined;
  // Autoheal's writes leave the pass unsatisfied with no record to wait for (0: look again at once).
  let requeueSeconds: number | undefined = satisfied ? undefined : gate.kind === 'wait' ? gate.seconds : 0;
  if (satisfied && pool.spec.paused !== true && !isDeleting(pool)) {
    const scaled = await scale(key, o, vms, deps);
    syncError = scaled.error;
    if (scaled.stable && !syncError) {
      const updated = await update(o, vms, deps);
      syncError = updated.error;
      if (updated.budgetExhausted) requeueSeconds = RETRY_DELAY_SECONDS;
      if (updated.stable && !syncError) syncError = await pruneRevisions(o, vms, deps);
    }
  } else if (isDeleting(pool)) {
    if ((await letGo(pool, o, deps)) === 'gone') return done;
    syncError = await pruneRevisions(o, vms, deps);
  }

  // status, from the VMs read at the start of the pass
  if ((await writeStatus(pool, vms, syncError, deps)) === 'gone') return done;
  if (syncError) throw new TransientError(syncError.reason, syncError.message);
  return requeueSeconds !== undefined ? requeueAfter(Math.max(0.05, requeueSeconds / (deps.clockSpeed ?? 1)), satisfied ? 'unavailability budget exhausted' : 'waiting for expectations') : done;
}

/** Why the pool's selector cannot be used (unparsable, or not selecting its own template), if it cannot. */
function selectorProblem(pool: VirtualMachinePool): string | undefined {
  try {
    validateSelector(pool.spec.selector, 'spec.selector');
  } catch (err) {
    if (err instanceof InvalidInputError) return err.message;
    throw err;
  }
  return selectorMatches(pool.spec.selector, pool.spec.virtualMachineTemplate.metadata?.labels) ? undefined : 'selector does not match the template labels';
}

/** Deletes the pool's VMs that keep failing to start; true when it deleted any. */
async function autoheal(key: string, o: Observed, deps: PoolDeps): Promise<boolean> {
  const pool = o.pool;
  const own = o.allVms.filter((vm) => isPoolControlled(vm, pool.metadata?.uid));
  const candidates = healingCandidates(own, pool.spec.autohealing ?? {}, deps.now());
  const selection = selectForDeletion(candidates, candidates.length, pool.spec.scaleInStrategy?.proactive?.selectionPolicy, deps.random ?? Math.random);
  await deleteVms(key, pool, selection, pool.spec.scaleInStrategy?.proactive?.statePreservation, deps);
  return selection.vms.length > 0;
}

/**
 * The pool's VMs that match its selector. Owned VMs that no longer match are released (unless
 * the pool is going); orphans are never adopted (Q-P3).
 */
async function claimVms(o: Observed, deps: PoolDeps): Promise<VirtualMachine[]> {
  const pool = o.pool;
  const uid = pool.metadata?.uid ?? '';
  const kept: VirtualMachine[] = [];
  for (const vm of o.allVms) {
    if (!isPoolControlled(vm, uid)) continue;
    if (selectorMatches(pool.spec.selector, vm.metadata?.labels)) kept.push(vm);
    else if (!isDeleting(pool)) await patchFresh(vm, (v) => releaseOps(v, uid), deps);
  }
  return kept;
}

/** Adds the pool finalizer; the pool as written, or undefined when it is gone. */
async function ensureFinalizer(pool: VirtualMachinePool, deps: PoolDeps): Promise<VirtualMachinePool | undefined> {
  const ops = addFinalizerOps(pool);
  if (ops.length === 0) return pool;
  try {
    return await deps.kube.patch(VM_POOLS, pool.metadata?.namespace ?? '', pool.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * A deleting pool: its finalizer comes off the VMs its selector matches (not those another pool
 * controls; the VMs themselves go by garbage collection), then off the pool.
 */
async function letGo(pool: VirtualMachinePool, o: Observed, deps: PoolDeps): Promise<'gone' | 'kept'> {
  const uid = pool.metadata?.uid ?? '';
  let last: unknown;
  for (const vm of o.allVms) {
    if (!vm.metadata?.finalizers?.includes(POOL_FINALIZER) || !selectorMatches(pool.spec.selector, vm.metadata.labels)) continue;
    const ref = controllerOf(vm);
    if (ref && ref.kind === KIND_POOL && ref.uid !== uid) continue;
    try {
      await patchFresh(vm, removeFinalizerOps, deps);
    } catch (err) {
      last = err;
    }
  }
  if (last) throw last;
  const ops = removeFinalizerOps(pool);
  if (ops.length === 0) return 'kept';
  try {
    await deps.kube.patch(VM_POOLS, pool.metadata?.namespace ?? '', pool.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    if (err instanceof NotFoundError) return 'gone';
    throw err;
  }
  // With no other finalizer left the pool is gone now; with one, the next pass writes its status.
  return (pool.metadata?.finalizers ?? []).length <= 1 ? 'gone' : 'kept';
}

/** Deletes the revisions nothing names any more. */
async function pruneRevisions(o: Observed, vms: readonly VirtualMachine[], deps: PoolDeps): Promise<SyncError | undefined> {
  const ns = o.pool.metadata?.namespace ?? '';
  try {
    for (const name of prunableRevisions(o.revisions, vms, o.vmis)) await deps.kube.delete(CONTROLLER_REVISIONS, ns, name);
    return undefined;
  } catch (err) {
    return { reason: 'FailedRevisionPruning', message: `error while pruning vmpool revisions: ${errorText(err)}` };
  }
}

async function writeStatus(pool: VirtualMachinePool, vms: readonly VirtualMachine[], syncError: SyncError | undefined, deps: PoolDeps): Promise<'gone' | 'ok'> {
  const { status, events } = computePoolStatus(pool, vms, syncError, deps.now());
  for (const e of events) await poolEvent(deps, pool, e.type, e.reason, e.message);
  return (await writeObjectStatus(deps.kube, VM_POOLS, pool, status, { equal: (next, read) => semanticallyEqual(next, read ?? {}) })) ? 'ok' : 'gone';
}
