/**
 * DataVolume templates (reference.md §c.2 step 7): the DataVolumes a VM's `dataVolumeTemplates`
 * ask for, which of them are missing, and whether the ones that exist let a VMI start. Pure.
 */
import type { DataVolume, DataVolumeTemplateSpec, VirtualMachine } from '../../shared/api/index.ts';
import { CREATED_BY_LABEL, KIND_VM, KUBEVIRT_API_VERSION } from '../../shared/api/well-known.ts';
import { ALLOW_CLAIM_ADOPTION_ANNOTATION, CDI_API_VERSION, IMMEDIATE_DV_CREATION_ANNOTATION } from './well-known.ts';

/** The DataVolume names the VM's templates ask for, in template order. */
export function templateNames(vm: VirtualMachine): string[] {
  return (vm.spec.dataVolumeTemplates ?? []).map((t) => t.metadata?.name ?? '').filter((n) => n !== '');
}

/** The DataVolumes the VM's template volumes name (templated or not): what printableStatus reads, as KubeVirt does. */
export function volumeDataVolumeNames(vm: VirtualMachine): string[] {
  return [...new Set((vm.spec.template.spec?.volumes ?? []).map((v) => v.dataVolume?.name ?? '').filter((n) => n !== ''))];
}

/** DataVolumes are created with the VM unless it says `kubevirt.io/immediate-data-volume-creation: "false"`. */
export function createsDataVolumesImmediately(vm: VirtualMachine): boolean {
  return vm.metadata?.annotations?.[IMMEDIATE_DV_CREATION_ANNOTATION] !== 'false';
}

/**
 * The DataVolume a template describes: its name, labels and annotations, the VM's UID as
 * `kubevirt.io/created-by`, claim adoption allowed, a controller reference to the VM (so it goes
 * when the VM goes), and the VM template's priority class when the DV names none.
 */
export function renderDataVolume(vm: VirtualMachine, template: DataVolumeTemplateSpec): DataVolume {
  const meta = template.metadata ?? {};
  const spec = structuredClone(template.spec);
  const priorityClass = vm.spec.template.spec?.priorityClassName;
  if (priorityClass && !spec.priorityClassName) spec.priorityClassName = priorityClass;
  return {
    apiVersion: CDI_API_VERSION,
    kind: 'DataVolume',
    metadata: {
      name: meta.name ?? '',
      namespace: vm.metadata?.namespace ?? '',
      labels: { ...meta.labels, [CREATED_BY_LABEL]: vm.metadata?.uid ?? '' },
      annotations: { ...meta.annotations, [ALLOW_CLAIM_ADOPTION_ANNOTATION]: 'true' },
      ownerReferences: [
        { apiVersion: KUBEVIRT_API_VERSION, kind: KIND_VM, name: vm.metadata?.name ?? '', uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec,
  };
}

/** Templates whose DataVolume does not exist yet, rendered. */
export function missingDataVolumes(vm: VirtualMachine, existing: ReadonlyMap<string, DataVolume>): DataVolume[] {
  return (vm.spec.dataVolumeTemplates ?? []).filter((t) => t.metadata?.name && !existing.has(t.metadata.name)).map((t) => renderDataVolume(vm, t));
}

/**
 * Populated, or waiting for its first consumer (the VMI's pod is that consumer, so waiting for it
 * would deadlock), or populated by an external populator: the VMI may start.
 */
export function isDataVolumeReadyForStart(dv: DataVolume): boolean {
  const phase = dv.status?.phase;
  return phase === 'Succeeded' || phase === 'WaitForFirstConsumer' || phase === 'PendingPopulation';
}

export function isDataVolumeFailed(dv: DataVolume): boolean {
  return dv.status?.phase === 'Failed';
}

/** printableStatus `DataVolumeError`: failed, or its Running condition says the import errored. */
export function hasDataVolumeError(dv: DataVolume): boolean {
  if (isDataVolumeFailed(dv)) return true;
  const running = dv.status?.conditions?.find((c) => c.type === 'Running');
  return running?.status === 'False' && (running.reason === 'Error' || running.reason === 'ImagePullFailed');
}

/**
 * printableStatus `Provisioning`: still populating. An unbound WaitForFirstConsumer DV is waiting,
 * not provisioning; one whose claim is bound already is (KubeVirt's HasDataVolumeProvisioning).
 */
export function isDataVolumeProvisioning(dv: DataVolume): boolean {
  const phase = dv.status?.phase;
  if (phase === 'Succeeded' || phase === 'PendingPopulation') return false;
  const bound = dv.status?.conditions?.some((c) => c.type === 'Bound' && c.status === 'True') === true;
  return bound || phase !== 'WaitForFirstConsumer';
}

/**
 * The DV's claim is not bound yet. KubeVirt reads the PVC's phase; to stay within the read budget
 * we read CDI's `Bound` condition on the DataVolume, which mirrors it.
 */
export function isDataVolumeUnbound(dv: DataVolume): boolean {
  const bound = dv.status?.conditions?.find((c) => c.type === 'Bound');
  return bound !== undefined && bound.status !== 'True';
}

/** Readiness of every templated DataVolume, as the start decision needs it. */
export interface DataVolumeReadiness {
  readonly missing: readonly DataVolume[];
  readonly failed: readonly string[];
  /** Every template's DV exists and is ready for start. */
  readonly ready: boolean;
}

export function dataVolumeReadiness(vm: VirtualMachine, existing: ReadonlyMap<string, DataVolume>): DataVolumeReadiness {
  const missing = missingDataVolumes(vm, existing);
  const names = templateNames(vm);
  const failed = names.filter((n) => {
    const dv = existing.get(n);
    return dv !== undefined && isDataVolumeFailed(dv);
  });
  const ready = missing.length === 0 && names.every((n) => isDataVolumeReadyForStart(existing.get(n)!));
  return { missing, failed, ready };
}
