/**
 * What an export's source offers (reference §3.2), decided from objects already read: its
 * volumes, whether it is available (not in use and populated), whether it has content, the Ready
 * condition to show while no exporter pod runs, and the source's own condition (`PVCReady`,
 * `VolumesCreated`; none for a VM). One function per source kind; no I/O.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import type { VirtualMachineSnapshotContentObject, VirtualMachineSnapshotObject } from '../../shared/api/export.ts';
import { controllerOf } from '../../shared/predicates/owner-refs.ts';
import { COND, CONTENT_TYPE_ANNOTATION, REASON } from './names.ts';
import type { BackupInfo } from './backup-source.ts';

/** A condition to set (type, status, reason, message); the time is the writer's. */
export interface CondSpec {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** One claim the exporter serves. */
export interface ExportVolume {
  readonly claim: V1PersistentVolumeClaim;
  /** Served as a disk image (raw, gzip) rather than a directory (dir, tar.gz). */
  readonly kubevirtContent: boolean;
}

export type SourceKind = 'pvc' | 'vm' | 'snapshot' | 'backup';

export interface SourceResult {
  readonly kind: SourceKind;
  readonly volumes: readonly ExportVolume[];
  readonly inUse: boolean;
  readonly populated: boolean;
  /** The Ready condition while there is no exporter pod. */
  readonly readyCondition: CondSpec;
  readonly sourceCondition?: CondSpec;
  /** The VM whose manifest is served (VM and snapshot sources, when it exists). */
  readonly vm?: VirtualMachine;
  /** `status.virtualMachineName` (VM and snapshot sources). */
  readonly virtualMachineName?: string;
  /** A backup source's volumes and what its exporter needs (backup-source.ts). */
  readonly backup?: BackupInfo;
}

/**
 * Which source an export names, in KubeVirt's order (claim, snapshot, VM, template, backup), by
 * group and kind; undefined for one this controller does not export. A claim or a backup may leave
 * the group out. VirtualMachineTemplate sources are not exported here (docs/export-controller.md).
 */
export function sourceKindOf(ref: { apiGroup?: string | null; kind: string }): SourceKind | undefined {
  const group = ref.apiGroup ?? '';
  if (group === '' && ref.kind === 'PersistentVolumeClaim') return 'pvc';
  if (group === 'snapshot.kubevirt.io' && ref.kind === 'VirtualMachineSnapshot') return 'snapshot';
  if (group === 'kubevirt.io' && ref.kind === 'VirtualMachine') return 'vm';
  if ((group === '' || group === 'backup.kubevirt.io') && ref.kind === 'VirtualMachineBackup') return 'backup';
  return undefined;
}

export const isAvailable = (s: SourceResult) => !s.inUse && s.populated;
export const hasContent = (s: SourceResult) => (s.backup ? s.backup.volumes.length : s.volumes.length) > 0;

const ready = (reason: string, message = ''): CondSpec => ({ type: COND.ready, status: 'False', reason, message });

/** The DataVolume that controls a claim, by name, if any. */
export function ownerDataVolumeName(pvc: V1PersistentVolumeClaim): string | undefined {
  const ref = controllerOf(pvc);
  return ref?.kind === 'DataVolume' ? ref.name : undefined;
}

/** Populated: no DataVolume controls the claim, or it has Succeeded. */
export function isPopulated(pvc: V1PersistentVolumeClaim, dv: DataVolume | undefined): boolean {
  return ownerDataVolumeName(pvc) === undefined || dv?.status?.phase === 'Succeeded';
}

/** Block mode, a `kubevirt` (or empty) content-type annotation, or a controlling DataVolume of kubevirt content. */
export function isKubevirtContent(pvc: V1PersistentVolumeClaim, dv: DataVolume | undefined): boolean {
  if (pvc.spec?.volumeMode === 'Block') return true;
  const annotations = pvc.metadata?.annotations ?? {};
  if (CONTENT_TYPE_ANNOTATION in annotations) {
    const t = annotations[CONTENT_TYPE_ANNOTATION];
    if (t === 'kubevirt' || t === '') return true;
  }
  if (dv && ownerDataVolumeName(pvc) === dv.metadata?.name) {
    const t = (dv.spec as { contentType?: string }).contentType ?? '';
    return t === 'kubevirt' || t === '';
  }
  return false;
}

/** The claims a pod mounts. */
const claimsOfPod = (pod: V1Pod) => (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));

/** A pod other than our own exporter, not Succeeded, mounts the claim. */
export function claimInUse(claim: string, pods: readonly V1Pod[], exportUid: string | undefined): boolean {
  return pods.some((p) => p.status?.phase !== 'Succeeded' && controllerOf(p)?.uid !== exportUid && claimsOfPod(p).includes(claim));
}

function pvcReadyCondition(pvc: V1PersistentVolumeClaim): CondSpec {
  const phase = pvc.status?.phase;
  if (phase === 'Bound') return { type: COND.pvcReady, status: 'True', reason: REASON.pvcBound, message: '' };
  if (phase === 'Pending') return { type: COND.pvcReady, status: 'False', reason: REASON.pvcPending, message: '' };
  return { type: COND.pvcReady, status: 'False', reason: REASON.unknown, message: '' };
}

/** A PVC source. `dv` is the claim's controlling DataVolume (already checked to exist). */
export function pvcSource(ns: string, name: string, pvc: V1PersistentVolumeClaim | undefined, dv: DataVolume | undefined, pods: readonly V1Pod[], exportUid: string | undefined): SourceResult {
  const id = `${ns}/${name}`;
  if (!pvc) {
    return {
      kind: 'pvc',
      volumes: [],
      inUse: false,
      populated: false,
      readyCondition: ready(REASON.initializing),
      sourceCondition: { type: COND.pvcReady, status: 'False', reason: REASON.pvcNotFound, message: `PersistentVolumeClaim ${id} not found` },
    };
  }
  const populated = isPopulated(pvc, dv);
  const inUse = claimInUse(name, pods, exportUid);
  const readyCondition = inUse ? ready(REASON.inUse, `PersistentVolumeClaim ${id} is in use`) : !populated ? ready(REASON.pvcPending, `PersistentVolumeClaim ${id} is not populated`) : ready(REASON.initializing);
  return { kind: 'pvc', volumes: [{ claim: pvc, kubevirtContent: isKubevirtContent(pvc, dv) }], inUse, populated, readyCondition, sourceCondition: pvcReadyCondition(pvc) };
}

/** One claim-backed volume of a VM, as read: the claim (if it exists) and its DataVolume. */
export interface VmClaim {
  readonly claimName: string;
  readonly pvc: V1PersistentVolumeClaim | undefined;
  readonly dv: DataVolume | undefined;
  /** The volume is a DataVolume volume: its claim not existing yet means "not populated". */
  readonly fromDataVolume: boolean;
}

/**
 * A VM source. `claims` are the VM's claim-backed volumes in volume order (backend claim last);
 * `backendMissing` is true when the VM needs a backend claim and none exists (no volumes then).
 */
export function vmSource(ns: string, name: string, vm: VirtualMachine | undefined, vmi: VirtualMachineInstance | undefined, claims: readonly VmClaim[], backendMissing: boolean): SourceResult {
  const id = `${ns}/${name}`;
  if (!vm) return { kind: 'vm', volumes: [], inUse: false, populated: false, readyCondition: ready(REASON.vmNotFound, `Virtual Machine ${id} not found`), virtualMachineName: name };
  const existing = backendMissing ? [] : claims.filter((c) => c.pvc !== undefined);
  // A claim a DataVolume volume names but that does not exist yet is not populated.
  const populated = !backendMissing && claims.every((c) => c.pvc !== undefined || !c.fromDataVolume) && existing.every((c) => isPopulated(c.pvc!, c.dv));
  const volumes = existing.map((c) => ({ claim: c.pvc!, kubevirtContent: isKubevirtContent(c.pvc!, c.dv) }));
  const inUse = vmi !== undefined && vmi.status?.phase !== 'Succeeded' && vmi.status?.phase !== 'Failed';
  const readyCondition = inUse
    ? ready(REASON.inUse, `Virtual Machine ${id} is running`)
    : volumes.length === 0
      ? ready(REASON.vmNoVolumes, `Virtual Machine ${id} has no volumes`)
      : !populated
        ? ready(REASON.volumesNotPopulated, `Not all volumes in the Virtual Machine ${id} are populated`)
        : ready(REASON.initializing);
  return { kind: 'vm', volumes, inUse, populated: volumes.length === 0 ? true : populated, readyCondition, vm, virtualMachineName: name };
}

/**
 * A snapshot source. `claims` are the export's restored claims, one per content volume backup
 * (read or just created); `vm` is the snapshot's source VM as it is now (for the manifest).
 */
export function snapshotSource(
  ns: string,
  name: string,
  snapshot: VirtualMachineSnapshotObject | undefined,
  content: VirtualMachineSnapshotContentObject | undefined,
  claims: readonly { pvc: V1PersistentVolumeClaim; kubevirtContent: boolean }[],
  vm: VirtualMachine | undefined,
): SourceResult {
  const id = `${ns}/${name}`;
  const vmName = snapshot?.spec?.source?.name;
  const base = { kind: 'snapshot' as const, inUse: false, ...(vm ? { vm } : {}), ...(vmName !== undefined ? { virtualMachineName: vmName } : {}) };
  if (!snapshot) {
    return {
      ...base,
      volumes: [],
      populated: false,
      readyCondition: ready(REASON.snapshotNotFound, `VirtualMachineSnapshot ${id} not found`),
      sourceCondition: { type: COND.volumesCreated, status: 'False', reason: REASON.snapshotNoVolumes, message: `VirtualMachineSnapshot ${id} does not contain any volume snapshots` },
    };
  }
  if (snapshot.status?.readyToUse !== true || !content) {
    const message = `VirtualMachineSnapshot ${id} is not ready to use`;
    return { ...base, volumes: [], populated: false, readyCondition: ready(REASON.notAllPvcsCreated, message), sourceCondition: { type: COND.volumesCreated, status: 'False', reason: REASON.notAllPvcsCreated, message } };
  }
  const expected = content.status?.volumeSnapshotStatus?.length ?? 0;
  const volumes = claims.map((c) => ({ claim: c.pvc, kubevirtContent: c.kubevirtContent }));
  if (expected === 0) {
    return {
      ...base,
      volumes: [],
      populated: true,
      readyCondition: ready(REASON.initializing),
      sourceCondition: { type: COND.volumesCreated, status: 'False', reason: REASON.snapshotNoVolumes, message: `VirtualMachineSnapshot ${id} does not contain any volume snapshots` },
    };
  }
  if (volumes.length === expected) {
    return { ...base, volumes, populated: true, readyCondition: ready(REASON.initializing), sourceCondition: { type: COND.volumesCreated, status: 'True', reason: REASON.allPvcsReady, message: '' } };
  }
  return { ...base, volumes, populated: false, readyCondition: ready(REASON.initializing), sourceCondition: { type: COND.volumesCreated, status: 'False', reason: REASON.notAllPvcsCreated, message: 'Not all PVCs have been successfully restored' } };
}
