/**
 * The reads an export pass rests on: the cluster side (the KubeVirt CR and its namespace, the
 * export CA) and the source's objects, turned into a {@link SourceResult} by source.ts. An
 * export of a snapshot also creates the claims it restores the snapshot's volumes into here
 * ("get or create", as KubeVirt's source step does), since those claims are its volumes.
 */
import type { V1ConfigMap, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { KubeVirt, VirtualMachine } from '../../shared/api/index.ts';
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import { expandVm } from '../../shared/instancetype/expand-vm.ts';
import { FindError, findFlavours } from '../../shared/instancetype/find.ts';
import type { VirtualMachineExport } from '../../shared/api/export.ts';
import { CONFIG_MAPS, DATA_VOLUMES, KUBEVIRTS, PODS, PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOTS } from '../../shared/api/resources.ts';
import { vmiIdLabelValue } from '../../shared/template/render-metadata.ts';
import { backupSource } from './backup-source.ts';
import { TransientError } from '../../shared/errors.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import { BACKEND_LABEL, claimOfVolume, needsBackendStorage } from '../../shared/storage/vm-volumes.ts';
import type { ExportDeps } from './deps.ts';
import { claimsWithoutTemplate } from './manifest.ts';
import { BACKUP_CA, CA_BUNDLE_KEY, EXPORT_CA, snapshotClaimNameOf } from './names.ts';
import { isDiskVolume, renderSnapshotClaim } from './render-objects.ts';
import { isKubevirtContent, ownerDataVolumeName, pvcSource, snapshotSource, vmSource, type SourceKind, type SourceResult, type VmClaim } from './source.ts';

export interface ClusterView {
  readonly kubevirt: KubeVirt | undefined;
  /** Where virt-operator publishes its CAs. */
  readonly namespace: string;
  /** `kubevirt-export-ca` `ca-bundle` ("" while it is not published). */
  readonly caBundle: string;
}

export async function readCluster(deps: ExportDeps): Promise<ClusterView> {
  const kubevirt = (await deps.kube.list(KUBEVIRTS, undefined)).items[0];
  const namespace = kubevirt?.metadata?.namespace ?? 'kubevirt';
  const cm: V1ConfigMap | undefined = await deps.kube.get(CONFIG_MAPS, namespace, EXPORT_CA);
  return { kubevirt, namespace, caBundle: cm?.data?.[CA_BUNDLE_KEY] ?? '' };
}

async function dataVolumeOf(ns: string, pvc: V1PersistentVolumeClaim, deps: ExportDeps) {
  const dvName = ownerDataVolumeName(pvc);
  if (dvName === undefined) return undefined;
  const dv = await deps.kube.get(DATA_VOLUMES, ns, dvName);
  if (!dv) throw new TransientError('DataVolumeNotFound', `datavolume ${ns}/${dvName} not found`);
  return dv;
}

export async function readSource(kind: SourceKind, vme: VirtualMachineExport, cluster: ClusterView, deps: ExportDeps): Promise<SourceResult> {
  const ns = vme.metadata?.namespace ?? '';
  const name = vme.spec.source.name;
  switch (kind) {
    case 'pvc': {
      const pvc = await deps.kube.get(PVCS, ns, name);
      const dv = pvc ? await dataVolumeOf(ns, pvc, deps) : undefined;
      const pods = pvc ? (await deps.kube.list(PODS, ns)).items : [];
      return pvcSource(ns, name, pvc, dv, pods, vme.metadata?.uid);
    }
    case 'vm':
      return readVmSource(ns, name, deps);
    case 'snapshot':
      return readSnapshotSource(vme, ns, name, deps);
    case 'backup':
      return readBackupSource(ns, name, cluster, deps);
  }
}

/**
 * A backup source: the backup (missing, or without a status type: the pass fails and is retried,
 * as upstream's does, with its messages), the backup tunnel's CA (`kubevirt-backup-ca`), and the
 * VM it backs up — through its VirtualMachineBackupTracker when it names one — for the VMI's id.
 */
async function readBackupSource(ns: string, name: string, cluster: ClusterView, deps: ExportDeps): Promise<SourceResult> {
  const backup = await deps.kube.get(VM_BACKUPS, ns, name);
  if (!backup) throw new TransientError('VirtualMachineBackupNotFound', `VirtualMachineBackup not found: ${ns}/${name}`);
  if (!backup.status?.type) throw new TransientError('BackupStatusEmpty', 'backup status empty');
  const cm = await deps.kube.get(CONFIG_MAPS, cluster.namespace, BACKUP_CA);
  if (!cm) throw new TransientError('BackupCaMissing', 'could not obtain VirtualMachineBackup tunnel CA: backup CA not found');
  let vmName = backup.spec.source.name;
  if (backup.spec.source.kind === 'VirtualMachineBackupTracker') {
    const tracker = await deps.kube.get(VM_BACKUP_TRACKERS, ns, backup.spec.source.name);
    if (!tracker) throw new TransientError('VirtualMachineBackupTrackerNotFound', `VirtualMachineBackupTracker not found: ${ns}/${backup.spec.source.name}`);
    vmName = tracker.spec.source.name;
  }
  return backupSource(backup, { caCert: (cm.data?.[CA_BUNDLE_KEY] ?? '').trim(), vmiId: vmiIdLabelValue(vmName) });
}

async function readVmSource(ns: string, name: string, deps: ExportDeps): Promise<SourceResult> {
  const vm = await deps.kube.get(VMS, ns, name);
  if (!vm) return vmSource(ns, name, undefined, undefined, [], false);
  const vmi = await deps.kube.get(VMIS, ns, name);
  const claims: VmClaim[] = [];
  for (const v of vm.spec.template?.spec?.volumes ?? []) {
    const claimName = claimOfVolume(v as never);
    if (!claimName) continue;
    const pvc = await deps.kube.get(PVCS, ns, claimName);
    claims.push({ claimName, pvc, dv: pvc ? await dataVolumeOf(ns, pvc, deps) : undefined, fromDataVolume: v.dataVolume !== undefined });
  }
  let backendMissing = false;
  if (needsBackendStorage(vm as never)) {
    const backend = (await deps.kube.list(PVCS, ns, { labelSelector: `${BACKEND_LABEL}=${name}` })).items[0];
    if (backend) claims.push({ claimName: backend.metadata?.name ?? '', pvc: backend, dv: undefined, fromDataVolume: false });
    else backendMissing = true;
  }
  return vmSource(ns, name, vm, vmi, claims, backendMissing);
}

async function readSnapshotSource(vme: VirtualMachineExport, ns: string, name: string, deps: ExportDeps): Promise<SourceResult> {
  const snapshot = await deps.kube.get(VM_SNAPSHOTS, ns, name);
  const vmName = snapshot?.spec?.source?.name;
  const vm = vmName ? await deps.kube.get(VMS, ns, vmName) : undefined;
  if (!snapshot || snapshot.status?.readyToUse !== true) return snapshotSource(ns, name, snapshot, undefined, [], vm);
  const contentName = snapshot.status.virtualMachineSnapshotContentName ?? '';
  const content = contentName ? await deps.kube.get(VM_SNAPSHOT_CONTENTS, ns, contentName) : undefined;
  if (!content) throw new TransientError('SnapshotContentNotFound', `VirtualMachineSnapshotContent ${ns}/${contentName} not found`);
  const claims: { pvc: V1PersistentVolumeClaim; kubevirtContent: boolean }[] = [];
  for (const backup of content.spec?.volumeBackups ?? []) {
    const claimName = snapshotClaimNameOf(vme.metadata?.name ?? '', backup.persistentVolumeClaim.metadata?.name ?? '');
    let pvc = await deps.kube.get(PVCS, ns, claimName);
    if (!pvc) {
      const vs = backup.volumeSnapshotName ? await deps.kube.get(VOLUME_SNAPSHOTS, ns, backup.volumeSnapshotName) : undefined;
      if (!vs) throw new TransientError('VolumeSnapshotNotFound', `missing volumeSnapshot ${backup.volumeSnapshotName ?? ''}`);
      const want = renderSnapshotClaim(vme, backup, vs, isDiskVolume(content.spec?.source?.virtualMachine?.spec, backup.volumeName));
      try {
        pvc = await deps.kube.create(PVCS, want);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
        pvc = await deps.kube.get(PVCS, ns, claimName);
        if (!pvc) throw err;
      }
    }
    claims.push({ pvc, kubevirtContent: isKubevirtContent(pvc, undefined) });
  }
  return snapshotSource(ns, name, snapshot, content, claims, vm);
}

/**
 * What the VM manifest is made of (KubeVirt's getVmFromExport and extraVMData): the VM with its
 * instance type and preference expanded into it, and the existing claims of its volumes that no
 * DataVolume template names. A matcher that finds nothing, or an expansion that conflicts, fails
 * the pass (retried), as upstream's Expand error does.
 */
export async function readManifestVm(vm: VirtualMachine, cluster: ClusterView, deps: ExportDeps): Promise<{ vm: VirtualMachine; claims: V1PersistentVolumeClaim[] }> {
  const ns = vm.metadata?.namespace ?? '';
  let expanded = vm;
  if (vm.spec.instancetype || vm.spec.preference) {
    const what = `expanding the instance type of VirtualMachine ${ns}/${vm.metadata?.name ?? ''} for its export manifest`;
    let resolved;
    try {
      resolved = await findFlavours(deps.kube, vm);
    } catch (err) {
      if (err instanceof FindError) throw new TransientError('ExpandVMFailed', `${what}: ${err.message}`);
      throw err;
    }
    const config = deps.clusterConfig ? await deps.clusterConfig() : clusterConfigFromKubeVirt(cluster.kubevirt);
    const r = expandVm(vm, resolved, config);
    if (!r.ok) throw new TransientError('ExpandVMFailed', `${what}: ${r.message}`);
    expanded = r.vm;
  }
  const claims: V1PersistentVolumeClaim[] = [];
  for (const name of claimsWithoutTemplate(expanded)) {
    const pvc = await deps.kube.get(PVCS, ns, name);
    if (pvc) claims.push(pvc);
  }
  return { vm: expanded, claims };
}
