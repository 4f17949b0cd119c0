/**
 * The clone's two temporary objects (reference §3.2 "Create snapshot", "Create restore"), pure:
 * `tmp-snapshot-<uid>` of the source VM (nothing else: no labels, no deadline) and
 * `tmp-restore-<uid>` of that snapshot into the target, with the patches of §3.3. Both carry the
 * clone as controller owner, so they go with it.
 */
import type { VirtualMachineClone, VirtualMachineRestore, VirtualMachineSnapshot } from '../../shared/api/snapshot.ts';
import { clonePatches, type PatchSourceVm } from './patches.ts';
import { cloneOwnerRef, generatedTargetName, restoreNameFor, SNAPSHOT_API_VERSION, snapshotNameFor } from './names.ts';

/** The snapshot of source VM `vmName` (in the VM's namespace, which is the clone's). */
export function renderSnapshot(clone: VirtualMachineClone, vmName: string, namespace: string): VirtualMachineSnapshot {
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VirtualMachineSnapshot',
    metadata: { name: snapshotNameFor(clone.metadata?.uid ?? ''), namespace, ownerReferences: [cloneOwnerRef(clone)] },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vmName } },
  };
}

/** `volumeNamePolicy` → the restore's `volumeRestorePolicy` (unset stays unset; an unknown value randomizes). */
function volumeRestorePolicy(policy: string | undefined): string | undefined {
  if (policy === undefined || policy === '') return undefined;
  return policy === 'PrefixTargetName' ? 'PrefixTargetName' : 'RandomizeNames';
}

/** The restore of `snapshotName` into the clone's target; `vm` is the VM stored in the snapshot content. */
export function renderRestore(clone: VirtualMachineClone, snapshotName: string, vm: PatchSourceVm & { metadata?: { name?: string } }, random: () => number = Math.random): VirtualMachineRestore {
  const target = { ...(clone.spec?.target ?? {}) };
  if (!target.name) target.name = generatedTargetName(vm.metadata?.name ?? '', random);
  const policy = volumeRestorePolicy(clone.spec?.volumeNamePolicy);
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VirtualMachineRestore',
    metadata: { name: restoreNameFor(clone.metadata?.uid ?? ''), namespace: clone.metadata?.namespace ?? '', ownerReferences: [cloneOwnerRef(clone)] },
    spec: {
      target,
      virtualMachineSnapshotName: snapshotName,
      patches: clonePatches(clone, vm),
      ...(policy ? { volumeRestorePolicy: policy } : {}),
    },
  };
}
