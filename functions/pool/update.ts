/**
 * Rolling a template change out (reference §2.5), once the scale is stable: outdated VMs are
 * re-rendered (always), then — unless the strategy is opportunistic — each up-to-date VM's VMI is
 * brought to the VM's revision within the `maxUnavailable` budget (update-plan.ts decides).
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePool } from '../../shared/api/index.ts';
import { VMIS, VMS } from '../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { KubeTransientError, NotFoundError } from '../../shared/kube/errors.ts';
import type { PoolDeps } from './deps.ts';
import { poolEvent } from './events.ts';
import type { Observed } from './observed.ts';
import { renderUpdatedVm } from './render-vm.ts';
import { isOutdated } from './revisions.ts';
import { ensureRevision } from './scale.ts';
import { planProactive, updateWorkingSet, type VmiAction } from './update-plan.ts';
import { REVISION_LABEL, type SyncError } from './well-known.ts';
import { errorText } from '../../shared/errors.ts';

export interface UpdateResult {
  /** No outdated VM in the working set. */
  readonly stable: boolean;
  readonly error?: SyncError;
  /** The unavailability budget ran out: look again in 3 seconds. */
  readonly budgetExhausted?: boolean;
}

export async function update(o: Observed, vms: readonly VirtualMachine[], deps: PoolDeps): Promise<UpdateResult> {
  const pool = o.pool;
  if (pool.spec.updateStrategy?.unmanaged !== undefined) return { stable: true };
  let working: VirtualMachine[];
  try {
    working = updateWorkingSet(pool, vms);
  } catch (err) {
    return { stable: false, error: { reason: 'FailedUpdate', message: `failed to filter VMs based on ordered policies: ${errorText(err)}` } };
  }
  const outdated = working.filter((vm) => isOutdated(vm, o.revisions, pool));
  if (outdated.length > 0) {
    try {
      const revision = await ensureRevision(o, deps);
      await updateVms(pool, outdated, revision, deps);
    } catch (err) {
      return { stable: false, error: { reason: 'FailedUpdate', message: `error during VM update: ${errorText(err)}` } };
    }
  }
  let budgetExhausted = false;
  if (pool.spec.updateStrategy?.opportunistic === undefined) {
    const stale = new Set(outdated);
    try {
      const plan = planProactive(pool, working.filter((vm) => !stale.has(vm)), o.vmis, o.revisions, pool.spec.replicas ?? 1, deps.random ?? Math.random);
      // Not Ready first, one after the other: the first error aborts the rest.
      for (const a of plan.unhealthy) await actOnVmi(pool, a, deps);
      await Promise.all(plan.budgeted.map((a) => actOnVmi(pool, a, deps)));
      budgetExhausted = plan.budgetExhausted;
    } catch (err) {
      return { stable: outdated.length === 0, error: { reason: 'FailedUpdate', message: `error during VMI update: ${errorText(err)}` } };
    }
  }
  return { stable: outdated.length === 0, budgetExhausted };
}

/** Opportunistic VM update: a full update of each outdated VM; the first error is thrown after all ran. */
async function updateVms(pool: VirtualMachinePool, outdated: readonly VirtualMachine[], revision: string, deps: PoolDeps): Promise<void> {
  const errors: unknown[] = [];
  await Promise.all(
    outdated.map(async (vm) => {
      const ns = vm.metadata?.namespace ?? '';
      const name = vm.metadata?.name ?? '';
      try {
        await updateVm(pool, vm, revision, deps);
        await poolEvent(deps, pool, 'Normal', 'SuccessfulUpdate', `Updated VM ${ns}/${name}`);
      } catch (err) {
        // Name and namespace in this order, as upstream prints them.
        await poolEvent(deps, pool, 'Warning', 'FailedUpdate', `Error updating virtual machine ${name}/${ns}: ${errorText(err)}`);
        errors.push(err);
      }
    }),
  );
  if (errors.length > 0) throw errors[0];
}

/**
 * One full update, conditional on the resourceVersion read. The VM controller writes the VM's
 * status often, so a conflict re-reads once and re-renders from the fresh VM.
 */
async function updateVm(pool: VirtualMachinePool, vm: VirtualMachine, revision: string, deps: PoolDeps): Promise<void> {
  try {
    await deps.kube.update(VMS, renderUpdatedVm(pool, vm, revision));
  } catch (err) {
    if (!(err instanceof KubeTransientError && err.reason === 'Conflict')) throw err;
    const fresh = await deps.kube.get(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '');
    if (!fresh || fresh.metadata?.uid !== vm.metadata?.uid) return;
    await deps.kube.update(VMS, renderUpdatedVm(pool, fresh, revision));
  }
}

/** Restart (delete the VMI), delete the VM (foreground), or relabel the VMI; upstream reports all as SuccessfulDelete (Q-P9). */
async function actOnVmi(pool: VirtualMachinePool, a: VmiAction, deps: PoolDeps): Promise<void> {
  const ns = a.vmi.metadata?.namespace ?? '';
  const name = a.vmi.metadata?.name ?? '';
  try {
    switch (a.action) {
      case 'none':
        break;
      case 'restart':
        // The UID precondition: a VMI the VM controller already replaced is not restarted again.
        await deps.kube.delete(VMIS, ns, name, { preconditions: { uid: a.vmi.metadata?.uid } });
        break;
      case 'vm-delete':
        await deps.kube.delete(VMS, ns, a.vm.metadata?.name ?? '', { propagationPolicy: 'Foreground', preconditions: { uid: a.vm.metadata?.uid } });
        break;
      case 'label-patch':
        await deps.kube.patch(VMIS, ns, name, { type: 'json', ops: labelPatch(a.vmi, a.vm.metadata?.labels?.[REVISION_LABEL] ?? '') });
        break;
    }
  } catch (err) {
    if (err instanceof NotFoundError) return;
    await poolEvent(deps, pool, 'Warning', 'FailedUpdate', `Error updating resource ${ns}/${name}: ${errorText(err)}`);
    throw err;
  }
  await poolEvent(deps, pool, 'Normal', 'SuccessfulDelete', `Successfully updated resource ${ns}/${name}`);
}

function labelPatch(vmi: VirtualMachineInstance, revision: string): JsonPatchOperation[] {
  const old = vmi.metadata?.labels;
  if (!old) return [{ op: 'add', path: '/metadata/labels', value: { [REVISION_LABEL]: revision } }];
  return [{ op: 'test', path: '/metadata/labels', value: old }, { op: 'replace', path: '/metadata/labels', value: { ...old, [REVISION_LABEL]: revision } }];
}
