/**
 * The VM controller's volume-update handler (reference-vm-vmi-depth §7, KubeVirt's
 * `handleVolumeUpdateRequest` and `pkg/virt-controller/watch/volume-migration`): which claims of
 * a running VMI the VM template now points elsewhere, whether they may be migrated, and the
 * `status.migratedVolumes` entries that describe the copy. The claims come through a narrow
 * reader, so every rule here is a function of what was read.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type {
  DataVolume,
  PersistentVolumeClaimInfo,
  StorageMigratedVolumeInfo,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceCondition,
  Volume,
} from '../../../shared/api/index.ts';
import { claimOfVolume } from '../../../shared/storage/vm-volumes.ts';
import { isVolumeMigrating } from '../../../shared/storage/volume-migration.ts';

/** What validation and the volume infos read: the claims and DataVolumes of the VM's namespace. */
export interface ClaimReader {
  pvc(name: string): Promise<V1PersistentVolumeClaim | undefined>;
  dataVolume(name: string): Promise<DataVolume | undefined>;
}

/** KubeVirt's `InvalidUpdateErrMsg`: a migrated volume changed again, other than back to its source. */
export const INVALID_UPDATE_MESSAGE = 'The volume can only be reverted to the previous version during the update';

/**
 * `updatedVolumesMapping`: volume name → the template's claim, for each VMI volume backed by a
 * claim whose template volume of the same name names another claim. Non-empty is KubeVirt's
 * `PersistentVolumesUpdated` too (the same pairs, walked from the other side).
 */
export function updatedVolumes(vmi: VirtualMachineInstance, vm: VirtualMachine): Map<string, string> {
  const template = new Map<string, string>();
  for (const v of vm.spec.template.spec?.volumes ?? []) {
    const claim = claimOfVolume(v);
    if (claim) template.set(v.name, claim);
  }
  const out = new Map<string, string>();
  for (const v of vmi.spec.volumes ?? []) {
    const claim = claimOfVolume(v);
    const wanted = template.get(v.name);
    if (claim && wanted !== undefined && wanted !== claim) out.set(v.name, wanted);
  }
  return out;
}

/** The outcome of `ValidateVolumes`. */
export type Validation =
  | { readonly kind: 'ok' }
  /** A destination PVC or DataVolume is missing: the VMI gets `VolumesChange=False`. */
  | { readonly kind: 'not-found'; readonly message: string }
  /** Volumes that cannot be migrated: the VM gets `RestartRequired` with the message. */
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * `ValidateVolumes`, in KubeVirt's order per changed volume: a filesystem, a shareable disk, a LUN
 * disk are invalid (collected, reported together); a missing destination PVC — or DataVolume, or
 * the PVC of a DataVolume not yet Succeeded — ends the check at once; a DataVolume whose PVC has no
 * `dataSourceRef` (no volume populators: not a CSI class) is invalid.
 */
export async function validateVolumes(vmi: VirtualMachineInstance, vm: VirtualMachine, read: ClaimReader): Promise<Validation> {
  const updated = updatedVolumes(vmi, vm);
  const disks = new Map((vmi.spec.domain.devices.disks ?? []).map((d) => [d.name, d]));
  const filesystems = new Set((vmi.spec.domain.devices.filesystems ?? []).map((f) => f.name));
  const invalid = { fs: [] as string[], shareable: [] as string[], luns: [] as string[], noCsiDvs: [] as string[] };
  for (const v of vm.spec.template.spec?.volumes ?? []) {
    if (!updated.has(v.name)) continue;
    if (filesystems.has(v.name)) {
      invalid.fs.push(v.name);
      continue;
    }
    const disk = disks.get(v.name);
    if (!disk) continue;
    if (disk.shareable === true) {
      invalid.shareable.push(v.name);
      continue;
    }
    if (disk.lun !== undefined) {
      invalid.luns.push(v.name);
      continue;
    }
    if (v.persistentVolumeClaim) {
      const claim = v.persistentVolumeClaim.claimName;
      if (!(await read.pvc(claim))) return notFound(`the pvc ${claim} doesn't exist`);
    }
    if (v.dataVolume) {
      const name = v.dataVolume.name;
      const dv = await read.dataVolume(name);
      if (!dv) return notFound(`the datavolume ${name} doesn't exist`);
      // A populated DataVolume is safe to use whatever its class.
      if (dv.status?.phase === 'Succeeded') continue;
      const pvc = await read.pvc(name);
      if (!pvc) return notFound(`the pvc ${name} doesn't exist`);
      if (!pvc.spec?.dataSourceRef) invalid.noCsiDvs.push(v.name);
    }
  }
  const parts: string[] = [];
  if (invalid.fs.length > 0) parts.push(` filesystems: ${goList(invalid.fs)}`);
  if (invalid.shareable.length > 0) parts.push(` shareable: ${goList(invalid.shareable)}`);
  if (invalid.luns.length > 0) parts.push(` luns: ${goList(invalid.luns)}`);
  if (invalid.noCsiDvs.length > 0) parts.push(` DV storage class isn't a CSI or not using volume populators: ${goList(invalid.noCsiDvs)}`);
  return parts.length === 0 ? { kind: 'ok' } : { kind: 'invalid', message: `invalid volumes to update with migration:${parts.join('')}` };
}

const notFound = (err: string): Validation => ({ kind: 'not-found', message: `One of the destination volumes doesn't exist: ${err}` });

/** Go's `%v` of a string slice. */
const goList = (names: readonly string[]) => `[${names.join(' ')}]`;

/** A claim as `persistentVolumeClaimInfo` describes it (only what the claim sets, as KubeVirt's omitempty fields). */
function claimInfo(claimName: string, pvc: V1PersistentVolumeClaim | undefined): PersistentVolumeClaimInfo {
  const info: PersistentVolumeClaimInfo = { claimName };
  if (pvc?.spec?.volumeMode) info.volumeMode = pvc.spec.volumeMode as NonNullable<PersistentVolumeClaimInfo['volumeMode']>;
  if (pvc?.spec?.accessModes?.length) info.accessModes = [...pvc.spec.accessModes] as NonNullable<PersistentVolumeClaimInfo['accessModes']>;
  const requests = pvc?.spec?.resources?.requests;
  if (requests && Object.keys(requests).length > 0) info.requests = { ...requests } as NonNullable<PersistentVolumeClaimInfo['requests']>;
  const capacity = pvc?.status?.capacity;
  if (capacity && Object.keys(capacity).length > 0) info.capacity = { ...capacity } as NonNullable<PersistentVolumeClaimInfo['capacity']>;
  return info;
}

/**
 * `GenerateMigratedVolumes`: one entry per template volume (in template order) whose claim differs
 * from the VMI's volume of the same name — the source claim (the VMI's) and the destination (the
 * template's), each with its volume mode, access modes, requests and capacity when it exists.
 */
export async function migratedVolumes(vmi: VirtualMachineInstance, vm: VirtualMachine, read: ClaimReader): Promise<StorageMigratedVolumeInfo[]> {
  const old = new Map<string, string>();
  for (const v of vmi.spec.volumes ?? []) {
    const claim = claimOfVolume(v);
    if (claim) old.set(v.name, claim);
  }
  const out: StorageMigratedVolumeInfo[] = [];
  for (const v of vm.spec.template.spec?.volumes ?? []) {
    const claim = claimOfVolume(v);
    const source = old.get(v.name);
    if (!claim || source === undefined || source === claim) continue;
    const [sourcePvc, destinationPvc] = await Promise.all([read.pvc(source), read.pvc(claim)]);
    out.push({ volumeName: v.name, sourcePVCInfo: claimInfo(source, sourcePvc), destinationPVCInfo: claimInfo(claim, destinationPvc) });
  }
  return out;
}

/**
 * `VolumeMigrationCancel`'s decision, for a VMI whose volumes are being migrated
 * (`VolumesChange=True`) when the template changed a migrated volume again: `revert` when every
 * migrated volume points back at its source claim and nothing else changed (the VMI's volumes go
 * back, `VolumesChange=False` reason `VolumesChangeCancellation`, `migratedVolumes` dropped),
 * `invalid` otherwise; undefined when no migration is to be cancelled.
 */
export function cancellation(vmi: VirtualMachineInstance, vm: VirtualMachine): 'revert' | 'invalid' | undefined {
  const migrated = vmi.status?.migratedVolumes ?? [];
  const updated = updatedVolumes(vmi, vm);
  if (!isVolumeMigrating(vmi) || !migrated.some((m) => updated.has(m.volumeName))) return undefined;
  for (const m of migrated) {
    const source = m.sourcePVCInfo?.claimName;
    if (source === undefined || updated.get(m.volumeName) !== source) return 'invalid';
    updated.delete(m.volumeName);
  }
  return updated.size === 0 ? 'revert' : 'invalid';
}

/**
 * `PatchVMIVolumes`: the VMI's volumes with each one named in `names` replaced by the template
 * volume of that name (a volume the template lacks stays as it is).
 */
export function volumesWithTemplate(vmiVolumes: readonly Volume[], names: ReadonlySet<string>, vm: VirtualMachine): Volume[] {
  const template = new Map((vm.spec.template.spec?.volumes ?? []).map((v) => [v.name, v]));
  return vmiVolumes.map((v) => (names.has(v.name) ? structuredClone(template.get(v.name) ?? v) : v));
}

/**
 * KubeVirt's `UpdateCondition` on a condition list: added when absent, replaced when its status or
 * reason differs, else left as it is (the first message and transition time stay).
 */
export function withCondition(list: readonly VirtualMachineInstanceCondition[], cond: VirtualMachineInstanceCondition): VirtualMachineInstanceCondition[] {
  const old = list.find((c) => c.type === cond.type);
  if (!old) return [...list, cond];
  if (old.status === cond.status && (old.reason ?? '') === (cond.reason ?? '')) return [...list];
  return list.map((c) => (c.type === cond.type ? cond : c));
}
