/**
 * The clone's checks on its source (reference §3.2), pure: backend storage (which a clone
 * cannot carry), the live VM's volume snapshot support before the snapshot is taken, and the
 * snapshot content the restore will use.
 */
import type { VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../shared/api/snapshot.ts';

interface DomainLike {
  devices?: { tpm?: { persistent?: boolean } };
  firmware?: { bootloader?: { efi?: { persistent?: boolean } } };
}
interface VolumeLike {
  name: string;
  persistentVolumeClaim?: unknown;
  dataVolume?: unknown;
}
/** A VM as these checks read it (the live one or the content's copy). */
export interface CheckedVm {
  spec?: { template?: { spec?: { domain?: DomainLike; volumes?: VolumeLike[] } } };
  status?: { changedBlockTracking?: { state?: string }; volumeSnapshotStatuses?: { name?: string; enabled?: boolean }[] };
}

const persistentTpmOrEfi = (vm: CheckedVm) => {
  const domain = vm.spec?.template?.spec?.domain;
  return domain?.devices?.tpm?.persistent === true || domain?.firmware?.bootloader?.efi?.persistent === true;
};

/** The live source VM keeps state in a backend PVC: a persistent TPM or EFI, or CBT Initializing/Enabled. */
export function liveVmNeedsBackendStorage(vm: CheckedVm): boolean {
  const cbt = vm.status?.changedBlockTracking?.state;
  return persistentTpmOrEfi(vm) || cbt === 'Initializing' || cbt === 'Enabled';
}

/** The content's VM (no status to read there: a persistent TPM or EFI only). */
export const contentVmNeedsBackendStorage = (vm: CheckedVm) => persistentTpmOrEfi(vm);

const claimVolumes = (vm: CheckedVm) => (vm.spec?.template?.spec?.volumes ?? []).filter((v) => v.persistentVolumeClaim !== undefined || v.dataVolume !== undefined);

/** Why the VM's volumes cannot be snapshotted yet (empty: they can): each PVC/DataVolume volume needs an enabled `volumeSnapshotStatuses` entry. */
export function volumeSnapshotProblems(vm: CheckedVm): string[] {
  const statuses = vm.status?.volumeSnapshotStatuses ?? [];
  const out: string[] = [];
  for (const v of claimVolumes(vm)) {
    const s = statuses.find((e) => e.name === v.name);
    if (!s) out.push(`Virtual Machine volume ${v.name} snapshot support unknown`);
    else if (s.enabled !== true) out.push(`Virtual Machine volume ${v.name} does not support snapshots`);
  }
  return out;
}

/** The content a snapshot points at: `status.virtualMachineSnapshotContentName`, else `vmsnapshot-content-<uid>`. */
export const contentNameOf = (snapshot: VirtualMachineSnapshot) => snapshot.status?.virtualMachineSnapshotContentName || `vmsnapshot-content-${snapshot.metadata?.uid ?? ''}`;

/** Why the content cannot be cloned from (undefined: it can), in KubeVirt's words; several volume problems joined by newlines. */
export function contentProblem(snapshot: VirtualMachineSnapshot, content: VirtualMachineSnapshotContent | undefined): string | undefined {
  const ns = snapshot.metadata?.namespace ?? '';
  const name = contentNameOf(snapshot);
  if (!content) return `snapshot content ${name} in namespace ${ns} does not exist`;
  if (content.spec?.virtualMachineSnapshotName === undefined || content.spec.virtualMachineSnapshotName === null) return `cannot get snapshot name from content ${name}`;
  const vm = content.spec.source?.virtualMachine as CheckedVm | undefined;
  if (!vm?.spec?.template) return undefined;
  if (contentVmNeedsBackendStorage(vm)) return `Clone of source with backendstorage is not supported: snapshot ${ns}/${snapshot.metadata?.name ?? ''}`;
  const backedUp = new Set((content.spec.volumeBackups ?? []).map((b) => b.volumeName));
  const missing = claimVolumes(vm).filter((v) => !backedUp.has(v.name)).map((v) => `volume ${v.name} is not backed up in snapshot ${snapshot.metadata?.name ?? ''}`);
  return missing.length > 0 ? missing.join('\n') : undefined;
}
