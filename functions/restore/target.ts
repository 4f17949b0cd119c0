/**
 * The restore target (reference §2.7): the restored DataVolumes' names, then the VM written from
 * the snapshot's (created with the restore's `spec.patches` applied, or updated in place), its
 * DataVolumes created once their claims are pre-populated, claims marked `owned-by-vm` handed
 * to the new VM. Reports whether anything was done (the restore then waits for the next pass).
 */
import { isDeepStrictEqual } from 'node:util';
import { DATA_VOLUMES, PVCS, VMS } from '../../shared/api/resources.ts';
import { adoptRevisions, copyRevisions } from '../../shared/instancetype/revision-copy.ts';
import type { VirtualMachineRestore, VirtualMachineSnapshotContent, VolumeRestore } from '../../shared/api/snapshot.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { applyJsonPatch } from '../../shared/kube/json-patch-apply.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import { handOverBackend } from './backend.ts';
import type { RestoreDeps } from './deps.ts';
import { restoreEvent } from './events.ts';
import { ALLOW_CLAIM_ADOPTION_ANNOTATION, OWNED_BY_VM_ANNOTATION, POPULATED_FOR_ANNOTATION, PRE_POPULATED_ANNOTATION, RESTORE_NAME_ANNOTATION, restoreVolumeName } from './names.ts';
import { restoredVm, type RestoreVm } from './restored-vm.ts';
import { namingOf, RestoreStepError } from './volumes.ts';
import { errorText } from '../../shared/errors.ts';

export interface TargetResult {
  updated: boolean;
  restores: VolumeRestore[];
  deletedDataVolumes?: string[];
}

const READY_DV_PHASES = new Set(['Succeeded', 'WaitForFirstConsumer', 'PendingPopulation']);

/** `spec.patches` (one RFC 6902 operation per string) joined into one array. */
export function restorePatches(r: VirtualMachineRestore): JsonPatchOperation[] {
  return (r.spec?.patches ?? []).flatMap((p) => {
    const parsed = JSON.parse(p) as JsonPatchOperation | JsonPatchOperation[];
    return Array.isArray(parsed) ? parsed : [parsed];
  });
}

/**
 * KubeVirt applies the patches to the VM's JSON and decodes the result into its Go type, whose
 * string fields are `omitempty`: a field a patch set to `""` (a clone's cleared firmware serial or
 * UUID, an interface's MAC) is absent from the VM it creates. The same here, for exactly the
 * paths the patches set to `""`.
 */
export function dropEmptyPatchedStrings<T>(vm: T, ops: readonly JsonPatchOperation[]): T {
  for (const op of ops) {
    if ((op.op !== 'replace' && op.op !== 'add') || op.value !== '') continue;
    const tokens = op.path.split('/').slice(1).map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    const key = tokens.pop();
    let parent: unknown = vm;
    for (const t of tokens) parent = parent && typeof parent === 'object' ? (parent as Record<string, unknown>)[t] : undefined;
    if (key === undefined || !parent || typeof parent !== 'object' || Array.isArray(parent)) continue;
    const record = parent as Record<string, unknown>;
    if (record[key] === '') delete record[key];
  }
  return vm;
}

export async function reconcileTarget(r: VirtualMachineRestore, content: VirtualMachineSnapshotContent, restoresIn: VolumeRestore[], target: RestoreVm | undefined, targetRestored: boolean, deps: RestoreDeps): Promise<TargetResult> {
  const ns = r.metadata?.namespace ?? '';
  if (target && targetRestored) return { updated: false, restores: restoresIn };
  const snapshotVm = content.spec?.source?.virtualMachine ?? {};
  const volumes = snapshotVm.spec?.template?.spec?.volumes ?? [];
  const templates = snapshotVm.spec?.dataVolumeTemplates ?? [];

  // 1. the restored DataVolumes' names, and their claims pre-populated for them
  const restores = restoresIn.map((e) => ({ ...e }));
  for (const entry of restores) {
    const dvName = volumes.find((v) => v.name === entry.volumeName)?.dataVolume?.name;
    if (!dvName || !templates.some((t) => t.metadata?.name === dvName)) continue;
    const want = restoreVolumeName(namingOf(r), entry.volumeName, dvName);
    const pvc = await deps.kube.get(PVCS, ns, entry.persistentVolumeClaim);
    if (!pvc) throw new RestoreStepError(`pvc ${ns}/${entry.persistentVolumeClaim} does not exist and should`);
    if (pvc.metadata?.annotations?.[POPULATED_FOR_ANNOTATION] !== want) {
      await deps.kube.update(PVCS, { ...pvc, metadata: { ...pvc.metadata, annotations: { ...(pvc.metadata?.annotations ?? {}), [POPULATED_FOR_ANNOTATION]: want }, ownerReferences: [] } });
    }
    entry.dataVolumeName = want;
  }
  if (!isDeepStrictEqual(restores, restoresIn)) return { updated: true, restores };

  // 2. the VM as it is to be
  const built = restoredVm(r, snapshotVm, restores, target);
  if ('error' in built) throw new RestoreStepError(built.error);
  const vm = built;

  // 3. its DataVolumes
  let updated = false;
  for (const t of vm.spec?.dataVolumeTemplates ?? []) {
    const name = t.metadata?.name ?? '';
    const dv = await deps.kube.get(DATA_VOLUMES, ns, name);
    if (dv) {
      if (!READY_DV_PHASES.has(dv.status?.phase ?? '')) updated = true;
      continue;
    }
    const pvc = await deps.kube.get(PVCS, ns, name);
    if (!pvc) throw new RestoreStepError(`pvc ${ns}/${name} does not exist and should`);
    if (pvc.metadata?.annotations?.[POPULATED_FOR_ANNOTATION] !== name || (pvc.metadata?.ownerReferences ?? []).length > 0) continue;
    const priorityClassName = (vm.spec?.template?.spec as { priorityClassName?: string } | undefined)?.priorityClassName;
    const body = {
      apiVersion: 'cdi.kubevirt.io/v1beta1',
      kind: 'DataVolume',
      metadata: { ...t.metadata, name, namespace: ns, annotations: { ...(t.metadata?.annotations ?? {}), [ALLOW_CLAIM_ADOPTION_ANNOTATION]: 'true', [RESTORE_NAME_ANNOTATION]: r.metadata?.name ?? '', [PRE_POPULATED_ANNOTATION]: 'true' } },
      spec: { ...(t.spec ?? {}), ...(priorityClassName ? { priorityClassName } : {}) },
    };
    try {
      await deps.kube.create(DATA_VOLUMES, body as never);
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) {
        await restoreEvent(deps, r, 'Warning', 'RestoreDataVolumeCreateError', `Error creating restore DataVolume ${name}: ${errorText(err)}`);
        throw err;
      }
    }
    updated = true;
  }
  let deletedDataVolumes: string[] | undefined;
  if (target) {
    const kept = new Set((vm.spec?.dataVolumeTemplates ?? []).map((t) => t.metadata?.name));
    deletedDataVolumes = (target.spec?.dataVolumeTemplates ?? []).map((t) => t.metadata?.name ?? '').filter((n) => !kept.has(n));
    if (!isDeepStrictEqual(deletedDataVolumes, r.status?.deletedDataVolumes ?? [])) updated = true;
  }
  // omitempty in KubeVirt's type: none deleted is no field, not [].
  if (updated) return { updated, restores, ...(deletedDataVolumes?.length ? { deletedDataVolumes } : {}) };

  // 4. the backend-storage claim handed to the target
  await handOverBackend(r, content, restores, deps);

  // 5. the VM written: created (with spec.patches) or updated in place, naming the instance type
  // and preference revisions copied back from the snapshot's under the target's name
  vm.spec = await copyRevisions(deps.kube, ns, vm.spec ?? {}, { from: r.spec?.virtualMachineSnapshotName ?? '', to: r.spec?.target?.name ?? '' });
  let written: RestoreVm;
  if (!target) {
    let patched: RestoreVm;
    try {
      patched = dropEmptyPatchedStrings(applyJsonPatch(vm, restorePatches(r)), restorePatches(r));
    } catch (err) {
      // a malformed patch only gets better with a new spec, which is an event of the restore
      throw new RestoreStepError(`restore patches: ${errorText(err)}`, true);
    }
    written = (await deps.kube.create(VMS, patched as never)) as unknown as RestoreVm;
    // claims the restore marked for the VM it would create become the VM's own
    if (r.spec?.volumeOwnershipPolicy !== 'None') {
      for (const v of written.spec?.template?.spec?.volumes ?? []) {
        const claim = v.persistentVolumeClaim?.claimName;
        if (!claim) continue;
        const pvc = await deps.kube.get(PVCS, ns, claim);
        if (!pvc || (pvc.metadata?.ownerReferences ?? []).length > 0 || pvc.metadata?.annotations?.[OWNED_BY_VM_ANNOTATION] !== r.metadata?.name) continue;
        const { [OWNED_BY_VM_ANNOTATION]: _drop, ...annotations } = pvc.metadata?.annotations ?? {};
        await deps.kube.update(PVCS, {
          ...pvc,
          metadata: {
            ...pvc.metadata,
            annotations,
            ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: written.metadata?.name ?? '', uid: written.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
          },
        });
      }
    }
  } else {
    written = (await deps.kube.update(VMS, vm as never)) as unknown as RestoreVm;
  }
  await adoptRevisions(deps.kube, ns, written.spec ?? {}, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: written.metadata?.name ?? '', uid: written.metadata?.uid ?? '' });
  return { updated: true, restores, ...(deletedDataVolumes?.length ? { deletedDataVolumes } : {}) };
}
