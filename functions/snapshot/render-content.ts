/**
 * The VirtualMachineSnapshotContent for a snapshot (reference §1.4), as a pure render: one
 * volumeBackup per claim-backed volume whose claim is cached, Bound, has a storage class and a
 * VolumeSnapshotClass (others are skipped here and show up as excluded volumes later), in VM
 * volume order; the source VM's metadata (minus managedFields) with the live spec offline, or —
 * online — the spec of the VM revision the VMI runs with its volumes, disks and
 * dataVolumeTemplates taken from the live VM.
 */
import { CONTENT_FINALIZER, contentNameFor, volumeSnapshotNameFor } from './names.ts';
import type { Meta, Pvc, VirtualMachine, VirtualMachineSnapshot, VirtualMachineSnapshotContent, VmSpec, VolumeBackup } from '../../shared/api/snapshot.ts';

const withoutManagedFields = (m: Meta | undefined): Meta => {
  const { managedFields: _drop, ...rest } = m ?? {};
  return rest;
};

/** The volumes to back up: `hasClass(pvc)` = its storage class resolves to a VolumeSnapshotClass. */
export function volumeBackupsFor(
  snapshotUid: string,
  claims: { volumeName: string; claimName: string }[],
  pvcs: ReadonlyMap<string, Pvc>,
  hasClass: (pvc: Pvc) => boolean,
): VolumeBackup[] {
  const out: VolumeBackup[] = [];
  for (const { volumeName, claimName } of claims) {
    const pvc = pvcs.get(claimName);
    if (!pvc || pvc.status?.phase !== 'Bound' || !pvc.spec?.storageClassName || !hasClass(pvc)) continue;
    out.push({
      volumeName,
      persistentVolumeClaim: { metadata: withoutManagedFields(pvc.metadata), spec: { ...(pvc.spec ?? {}) } },
      volumeSnapshotName: volumeSnapshotNameFor(snapshotUid, volumeName),
    });
  }
  return out;
}

/** The source VM's spec in the content: the revision's spec online, with live volumes/disks/templates. */
export function sourceSpecFor(vm: VirtualMachine, revisionSpec: VmSpec | undefined): VmSpec {
  const live = structuredClone(vm.spec ?? {});
  if (!revisionSpec) return live;
  const spec = structuredClone(revisionSpec);
  const tmpl = (spec.template ??= {});
  const tspec = (tmpl.spec ??= {});
  tspec.volumes = live.template?.spec?.volumes ?? [];
  const devices = ((tspec.domain ??= {}).devices ??= {});
  devices.disks = live.template?.spec?.domain?.devices?.disks ?? [];
  if (live.dataVolumeTemplates) spec.dataVolumeTemplates = live.dataVolumeTemplates;
  else delete spec.dataVolumeTemplates;
  return spec;
}

export function renderContent(snapshot: VirtualMachineSnapshot, vm: VirtualMachine, spec: VmSpec, volumeBackups: VolumeBackup[]): VirtualMachineSnapshotContent {
  return {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshotContent',
    metadata: { name: contentNameFor(snapshot.metadata?.uid ?? ''), namespace: snapshot.metadata?.namespace ?? '', finalizers: [CONTENT_FINALIZER] },
    spec: {
      virtualMachineSnapshotName: snapshot.metadata?.name ?? '',
      source: { virtualMachine: { metadata: withoutManagedFields(vm.metadata), spec, status: {} } },
      volumeBackups,
    },
  };
}
