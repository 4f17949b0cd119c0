/**
 * The VM a restore writes (reference §2.7 step 2), as a pure render from the VM the snapshot
 * content recorded: each PVC volume on its restore PVC; each DataVolume volume with a template on
 * the template renamed to its restored DataVolume; one without a template turned into a PVC
 * volume on the restore PVC; MemoryDump volumes dropped. A new target is created Halted (or
 * `running: false`) with the snapshot VM's labels and annotations; an existing one keeps its
 * metadata and run strategy. Both carry `restore.kubevirt.io/lastRestoreUID`, and a VM restored
 * under its own name gets the legacy firmware UUID when its template names none.
 */
import { legacyFirmwareUuid } from '../../shared/api/firmware-uuid.ts';
import type { Meta, VirtualMachineRestore, VmSpec, VolumeRestore } from '../../shared/api/snapshot.ts';
import type { VolumeLike } from '../../shared/storage/vm-volumes.ts';
import { LAST_RESTORE_UID_ANNOTATION, restoreAnnotationValue } from './names.ts';

/** A VM as the restore reads and writes it. */
export interface RestoreVm {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: VmSpec & { running?: boolean; runStrategy?: string };
  status?: Record<string, unknown>;
}

type Firmware = { uuid?: string; serial?: string };

export function restoredVm(restore: VirtualMachineRestore, snapshotVm: { metadata?: Meta; spec?: VmSpec }, restores: readonly VolumeRestore[], target: RestoreVm | undefined): RestoreVm | { error: string } {
  const spec = structuredClone(snapshotVm.spec ?? {}) as NonNullable<RestoreVm['spec']>;
  const byVolume = new Map(restores.map((r) => [r.volumeName, r]));
  const templates = spec.dataVolumeTemplates ?? [];
  const renamed = new Map<string, string>();
  const volumes: VolumeLike[] = [];
  for (const v of spec.template?.spec?.volumes ?? []) {
    if (v.memoryDump) continue;
    const r = byVolume.get(v.name);
    if (r && v.persistentVolumeClaim) volumes.push({ ...v, persistentVolumeClaim: { ...v.persistentVolumeClaim, claimName: r.persistentVolumeClaim } });
    else if (r && v.dataVolume) {
      const template = templates.find((t) => t.metadata?.name === v.dataVolume?.name);
      if (template) {
        if (!r.dataVolumeName) return { error: `DataVolumeName for dv ${v.dataVolume.name ?? ''} should have been updated already` };
        renamed.set(v.dataVolume.name ?? '', r.dataVolumeName);
        volumes.push({ ...v, dataVolume: { ...v.dataVolume, name: r.dataVolumeName } });
      } else {
        const { dataVolume: _dv, ...rest } = v;
        volumes.push({ ...rest, persistentVolumeClaim: { claimName: r.persistentVolumeClaim } });
      }
    } else volumes.push(v);
  }
  if (spec.template?.spec) spec.template.spec.volumes = volumes;
  if (spec.dataVolumeTemplates) spec.dataVolumeTemplates = templates.map((t) => (renamed.has(t.metadata?.name ?? '') ? { ...t, metadata: { ...t.metadata, name: renamed.get(t.metadata?.name ?? '') } } : t));

  const targetName = restore.spec?.target?.name ?? '';
  let vm: RestoreVm;
  if (!target) {
    if (spec.running !== undefined) spec.running = false;
    else spec.runStrategy = 'Halted';
    const m = snapshotVm.metadata ?? {};
    vm = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: targetName, namespace: restore.metadata?.namespace ?? '', ...(m.labels ? { labels: { ...m.labels } } : {}), ...(m.annotations ? { annotations: { ...m.annotations } } : {}) },
      spec,
    };
  } else {
    if (target.spec?.running !== undefined) {
      spec.running = false;
      delete spec.runStrategy;
    } else {
      delete spec.running;
      if (target.spec?.runStrategy !== undefined) spec.runStrategy = target.spec.runStrategy;
      else delete spec.runStrategy;
    }
    vm = { ...structuredClone(target), spec };
  }
  vm.metadata = { ...vm.metadata, annotations: { ...(vm.metadata?.annotations ?? {}), [LAST_RESTORE_UID_ANNOTATION]: restoreAnnotationValue(restore) } };
  const domain = spec.template?.spec?.domain as { firmware?: Firmware } | undefined;
  if (snapshotVm.metadata?.name === targetName && domain && !domain.firmware?.uuid) domain.firmware = { ...domain.firmware, uuid: legacyFirmwareUuid(targetName) };
  return vm;
}
