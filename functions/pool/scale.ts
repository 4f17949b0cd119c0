/**
 * Scaling a pool (reference §2.3): out by creating `<pool>-<index>` VMs at the lowest free
 * indices, in by the proactive scale-in policy, and — when the count is right — the opportunistic
 * cleanup of VMs already being deleted. At most {@link BURST_REPLICAS} per pass.
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachinePool } from '../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VMS } from '../../shared/api/resources.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import { isDeleting, selectForDeletion } from './delete-selection.ts';
import type { PoolDeps } from './deps.ts';
import { poolEvent } from './events.ts';
import { claimDeletions, creationFailed, deletionFailed, expectCreations } from './expectations.ts';
import { nextVmNames } from './names.ts';
import type { Observed } from './observed.ts';
import { renderVm } from './render-vm.ts';
import { renderRevision, revisionName } from './revisions.ts';
import { preserveState } from './state-preservation.ts';
import { BURST_REPLICAS, type SyncError } from './well-known.ts';
import { errorText } from '../../shared/errors.ts';

/** What a scale step did: `stable` when the count was already right. */
export interface ScaleResult {
  readonly stable: boolean;
  readonly error?: SyncError;
}

/** Scales `vms` (the pool's, deleting ones included) towards `spec.replicas` (default 1). */
export async function scale(key: string, o: Observed, vms: readonly VirtualMachine[], deps: PoolDeps): Promise<ScaleResult> {
  const pool = o.pool;
  const strategy = pool.spec.scaleInStrategy;
  // Deleting VMs count: the pool waits for them to go before replacing them (Q-P7).
  const diff = vms.length - (pool.spec.replicas ?? 1);
  const n = Math.min(Math.abs(diff), BURST_REPLICAS);
  // An opportunistic pool above its count also lets its deleting VMs go: upstream cleans them
  // only at diff 0, so a VM deleted by hand while the pool is above its count would keep the
  // pool finalizer, and the count, forever.
  if (diff === 0 || (diff > 0 && strategy?.opportunistic !== undefined)) {
    if (strategy?.unmanaged !== undefined) return { stable: diff === 0 };
    try {
      for (const vm of vms.filter(isDeleting)) await preserveState(pool, vm, strategy?.opportunistic?.statePreservation, deps);
    } catch (err) {
      return { stable: diff === 0, error: { reason: 'FailedScaleIn', message: `error during opportunistic scale in: ${errorText(err)}` } };
    }
    return { stable: diff === 0 };
  }
  if (diff < 0) {
    try {
      await scaleOut(key, o, n, deps);
      return { stable: false };
    } catch (err) {
      return { stable: false, error: { reason: 'FailedScaleOut', message: `error during scale out: ${errorText(err)}` } };
    }
  }
  // Above the count: only a proactive (or default) scale-in removes VMs; unmanaged ones stay.
  if (strategy?.unmanaged !== undefined) return { stable: false };
  try {
    await deleteVms(key, pool, selectForDeletion(vms, n, strategy?.proactive?.selectionPolicy, deps.random ?? Math.random), strategy?.proactive?.statePreservation, deps);
    return { stable: false };
  } catch (err) {
    return { stable: false, error: { reason: 'FailedScaleIn', message: `error during scale in: ${errorText(err)}` } };
  }
}

/** The current revision: reused by name when it exists (never compared, Q-P11), created otherwise. */
export async function ensureRevision(o: Observed, deps: PoolDeps): Promise<string> {
  const name = revisionName(o.pool);
  if (o.revisions.has(name)) return name;
  try {
    await deps.kube.create(CONTROLLER_REVISIONS, renderRevision(o.pool) as V1ControllerRevision & { metadata: { name: string } });
  } catch (err) {
    // Created by an earlier pass our read did not show yet: it is there, which is all we need.
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
  return name;
}

async function scaleOut(key: string, o: Observed, n: number, deps: PoolDeps): Promise<void> {
  const pool = o.pool;
  const ns = pool.metadata?.namespace ?? '';
  const names = nextVmNames(pool.metadata?.name ?? '', new Set(o.allVms.map((vm) => vm.metadata?.name ?? '')), n);
  const revision = await ensureRevision(o, deps);
  await expectCreations(key, names.map((x) => `${ns}/${x.name}`), deps);
  const errors: unknown[] = [];
  await Promise.all(
    names.map(async ({ name, index }) => {
      try {
        await deps.kube.create(VMS, renderVm(pool, name, index, revision));
        await poolEvent(deps, pool, 'Normal', 'SuccessfulCreate', `Created VM ${ns}/${name}`);
      } catch (err) {
        await creationFailed(key, `${ns}/${name}`, deps);
        // Names are deterministic: AlreadyExists is our own earlier create that a lagging read
        // missed (upstream reports it as FailedScaleOut, Q-P1); the VM is there, nothing failed.
        if (err instanceof AlreadyExistsError) return;
        errors.push(err);
      }
    }),
  );
  if (errors.length > 0) {
    await poolEvent(deps, pool, 'Warning', 'FailedCreate', `Error creating VM: ${errorText(errors[0])}`);
    throw errors[0];
  }
}

/**
 * Deletes the selected VMs (scale-in and autohealing), recording the deletions first, then lets
 * each go with the state-preservation cleanup. The first cleanup error is thrown after all ran.
 */
export async function deleteVms(key: string, pool: VirtualMachinePool, selection: { vms: VirtualMachine[]; unknownSort: boolean }, preservation: string | undefined, deps: PoolDeps): Promise<void> {
  if (selection.unknownSort) deps.log.warn('unknown sort policy, using Random', { key });
  const vms = selection.vms;
  if (vms.length === 0) return;
  if (!(await claimDeletions(key, vms, deps))) {
    deps.log.info('another pass is deleting VMs of this pool; leaving it to that one', { key });
    return;
  }
  const errors: unknown[] = [];
  await Promise.all(
    vms.map(async (vm) => {
      const ns = vm.metadata?.namespace ?? '';
      const name = `${ns}/${vm.metadata?.name ?? ''}`;
      try {
        // The UID precondition: never delete a newer VM of the same name than the one selected.
        const existed = await deps.kube.delete(VMS, ns, vm.metadata?.name ?? '', { preconditions: { uid: vm.metadata?.uid } });
        if (!existed) await deletionFailed(key, vm, deps);
      } catch (err) {
        await deletionFailed(key, vm, deps);
        await poolEvent(deps, pool, 'Warning', 'FailedDelete', `Error deleting virtual machine ${name}: ${errorText(err)}`);
        errors.push(err);
        return;
      }
      try {
        await preserveState(pool, vm, preservation, deps);
      } catch (err) {
        await poolEvent(deps, pool, 'Warning', 'FailedUpdate', `Error preserving state of VM ${name}: ${errorText(err)}`);
        errors.push(err);
      }
      await poolEvent(deps, pool, 'Normal', 'SuccessfulDelete', `Deleted VM ${name} with uid ${vm.metadata?.uid ?? ''} from pool`);
    }),
  );
  if (errors.length > 0) throw errors[0];
}
