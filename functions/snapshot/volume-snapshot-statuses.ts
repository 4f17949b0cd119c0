/**
 * A VM's `status.volumeSnapshotStatuses` (reference §1.8): per volume (backend volume included),
 * whether a snapshot could take it — not a claim-backed volume, a storage class that cannot be
 * found, no VolumeSnapshotClass for it, or enabled. The storage class of a DataVolume volume is
 * the DataVolume's `spec.pvc.storageClassName`, else the VM's dataVolumeTemplate of that name
 * (for a DataVolume the VM owns), else the claim's. Pure given the reads.
 */
import type { Pvc, VirtualMachine } from '../../shared/api/snapshot.ts';
import { backendVolumeName, claimOfVolume, isSnapshotable, type VolumeLike } from '../../shared/storage/vm-volumes.ts';
import type { ClassChoice } from './snapshot-class.ts';

export interface VolumeSnapshotStatus {
  name?: string;
  enabled: boolean;
  reason?: string;
}

/** What the computation reads, per name. */
export interface StatusReads {
  dataVolume(name: string): { spec?: { pvc?: { storageClassName?: string }; storage?: { storageClassName?: string } }; metadata?: { ownerReferences?: { kind?: string }[] } } | undefined;
  pvc(name: string): Pvc | undefined;
  /** The VolumeSnapshotClass choice per storage class name (every name {@link storageClassNames} gives). */
  classes: ReadonlyMap<string, ClassChoice>;
}

type Lookup = { sc: string } | { error: string };

function storageClassOf(vm: VirtualMachine, v: VolumeLike, claim: string, r: StatusReads): Lookup {
  if (v.dataVolume?.name) {
    const dv = r.dataVolume(v.dataVolume.name);
    const fromDv = dv?.spec?.pvc?.storageClassName;
    if (fromDv) return { sc: fromDv };
    if (dv?.metadata?.ownerReferences?.some((o) => o.kind === 'VirtualMachine')) {
      const t = vm.spec?.dataVolumeTemplates?.find((d) => d.metadata?.name === v.dataVolume?.name);
      const spec = t?.spec as { pvc?: { storageClassName?: string }; storage?: { storageClassName?: string } } | undefined;
      const fromTemplate = spec?.pvc?.storageClassName ?? spec?.storage?.storageClassName;
      if (fromTemplate) return { sc: fromTemplate };
    }
  }
  const pvc = r.pvc(claim);
  if (!pvc) return { error: 'PVC not found' };
  return { sc: pvc.spec?.storageClassName ?? '' };
}

/** The statuses, in volume order, the backend volume last. `backendClaim` = the backend PVC's name, if the VM has one. */
export function volumeSnapshotStatuses(vm: VirtualMachine, backendClaim: string | undefined, r: StatusReads): VolumeSnapshotStatus[] {
  const volumes: VolumeLike[] = [...(vm.spec?.template?.spec?.volumes ?? [])];
  if (backendClaim) volumes.push({ name: backendVolumeName(vm.metadata?.name ?? ''), persistentVolumeClaim: { claimName: backendClaim } });
  return volumes.map((v) => {
    if (!isSnapshotable(v)) return { name: v.name, enabled: false, reason: `Snapshot is not supported for this volumeSource type [${v.name}]` };
    const lookup = storageClassOf(vm, v, claimOfVolume(v) ?? '', r);
    if ('error' in lookup) return { name: v.name, enabled: false, reason: lookup.error };
    const choice = r.classes.get(lookup.sc) ?? { name: '' };
    if ('error' in choice) return { name: v.name, enabled: false, reason: choice.error };
    if (choice.name === '') return { name: v.name, enabled: false, reason: `No VolumeSnapshotClass: Volume snapshots are not configured for this StorageClass [${lookup.sc}] [${v.name}]` };
    return { name: v.name, enabled: true };
  });
}

/** Every storage class name the computation may ask about, so the caller can resolve them first. */
export function storageClassNames(vm: VirtualMachine, r: Omit<StatusReads, 'classes'>, claims: readonly string[]): string[] {
  const names = new Set<string>();
  for (const c of claims) names.add(r.pvc(c)?.spec?.storageClassName ?? '');
  for (const v of vm.spec?.template?.spec?.volumes ?? []) {
    const dv = v.dataVolume?.name ? r.dataVolume(v.dataVolume.name) : undefined;
    if (dv?.spec?.pvc?.storageClassName) names.add(dv.spec.pvc.storageClassName);
  }
  for (const t of vm.spec?.dataVolumeTemplates ?? []) {
    const spec = t.spec as { pvc?: { storageClassName?: string }; storage?: { storageClassName?: string } } | undefined;
    const sc = spec?.pvc?.storageClassName ?? spec?.storage?.storageClassName;
    if (sc) names.add(sc);
  }
  return [...names];
}
