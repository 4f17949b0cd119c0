/**
 * State preservation when a pool lets a VM go (reference §2.4): under `Offline` or `Online`
 * (identical here, as upstream) the VM's PVCs and DataVolumes lose their owner reference to it,
 * so garbage collection keeps them and a VM later re-created at the same index finds them; then,
 * always, the pool finalizer comes off the VM so it can go. First error stops it.
 */
import type { VirtualMachine, VirtualMachinePool } from '../../shared/api/index.ts';
import { DATA_VOLUMES, PVCS, VMS } from '../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { KubeTransientError, NotFoundError } from '../../shared/kube/errors.ts';
import { isControlledByUid } from '../../shared/predicates/owner-refs.ts';
import type { PoolDeps } from './deps.ts';
import { poolEvent } from './events.ts';
import { removeFinalizerOps, removeOwnerOps } from './patches.ts';
import { errorText } from '../../shared/errors.ts';

/** `Disabled` (default), `Offline` or `Online`. */
export type StatePreservation = string | undefined;

/** PVC and DataVolume names a VM owns by its spec: DataVolume templates, and the volumes' claims. */
export function storageNames(vm: VirtualMachine): { pvcs: string[]; dataVolumes: string[] } {
  const templates = (vm.spec.dataVolumeTemplates ?? []).map((t) => t.metadata?.name ?? '').filter((n) => n !== '');
  const volumes = vm.spec.template?.spec?.volumes ?? [];
  const claims = volumes.map((v) => v.persistentVolumeClaim?.claimName ?? '').filter((n) => n !== '');
  const dvs = volumes.map((v) => v.dataVolume?.name ?? '').filter((n) => n !== '');
  return { pvcs: [...new Set([...templates, ...claims])], dataVolumes: [...new Set([...templates, ...dvs])] };
}

/** Runs the cleanup of `vm`; throws (after its Warning event) on the first failure. */
export async function preserveState(pool: VirtualMachinePool, vm: VirtualMachine, preservation: StatePreservation, deps: PoolDeps): Promise<void> {
  const ns = vm.metadata?.namespace ?? '';
  const vmName = `${ns}/${vm.metadata?.name ?? ''}`;
  const uid = vm.metadata?.uid ?? '';
  if ((preservation ?? 'Disabled') !== 'Disabled') {
    const { pvcs, dataVolumes } = storageNames(vm);
    for (const [res, names, what] of [[PVCS, pvcs, 'PVC'], [DATA_VOLUMES, dataVolumes, 'DataVolume']] as const) {
      for (const name of names) {
        try {
          const obj = await deps.kube.get(res as typeof PVCS, ns, name);
          if (!obj) {
            deps.log.warn(`${what} of a VM leaving the pool not found`, { vm: vmName, name });
            continue;
          }
          if (!isControlledByUid(obj, uid)) continue;
          await deps.kube.patch(res as typeof PVCS, ns, name, { type: 'json', ops: removeOwnerOps(obj, uid) });
        } catch (err) {
          await poolEvent(deps, pool, 'Warning', 'FailedUpdate', `Error removing ${what} owner references for VM ${vmName}: ${errorText(err)}`);
          throw err;
        }
      }
    }
  }
  try {
    await patchFresh(vm, removeFinalizerOps, deps);
  } catch (err) {
    await poolEvent(deps, pool, 'Warning', 'FailedUpdate', `Error removing finalizer for VM ${vmName}: ${errorText(err)}`);
    throw err;
  }
}

/**
 * Patches `vm` with `ops(vm)`; when the guarded patch conflicts (another controller — the VM
 * controller adding or removing its own finalizer — wrote since our read) it re-reads once and
 * tries again. NotFound means the VM is gone: nothing left to do.
 */
export async function patchFresh(vm: VirtualMachine, ops: (vm: VirtualMachine) => JsonPatchOperation[], deps: PoolDeps): Promise<void> {
  const ns = vm.metadata?.namespace ?? '';
  const name = vm.metadata?.name ?? '';
  let current: VirtualMachine | undefined = vm;
  for (let attempt = 0; attempt < 2 && current; attempt++) {
    const patch = ops(current);
    if (patch.length === 0) return;
    try {
      await deps.kube.patch(VMS, ns, name, { type: 'json', ops: patch });
      return;
    } catch (err) {
      if (err instanceof NotFoundError) return;
      if (!(err instanceof KubeTransientError && err.reason === 'Conflict') || attempt === 1) throw err;
      current = await deps.kube.get(VMS, ns, name);
      // A different VM under the same name is not ours to touch.
      if (current && current.metadata?.uid !== vm.metadata?.uid) return;
    }
  }
}
