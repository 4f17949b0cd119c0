/**
 * The VM reconcile's volume hotplug step (reference-vm-vmi-depth §3.3): `status.volumeRequests`
 * applied to the running VMI's spec and to the VM template, then declarative hotplug under its
 * feature gates. KubeVirt's controller calls virt-api's VMI addvolume/removevolume subresources;
 * there is no virt-api here, so the step patches the VMI spec itself the way those subresources do
 * (a JSON patch that tests the lists it replaces).
 */
import type { Disk, VirtualMachine, VirtualMachineInstance, Volume } from '../../../shared/api/index.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import type { ClusterConfig } from '../../../shared/config/cluster-config.ts';
import type { VmDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { declarativeHotplugApplies, declarativeVolumeChange } from './declarative.ts';
import { applyVolumeRequests, vmiVolumeRequests } from './volume-requests.ts';
import { errorText } from '../../../shared/errors.ts';

export interface VolumeHotplugResult {
  /** The VM as written (its template carrying the requests), or as read. */
  readonly vm: VirtualMachine;
  readonly vmi: VirtualMachineInstance | undefined;
  readonly error?: SyncError;
}

/** `test` then `replace` (or `add` when absent) of the VMI's volume and disk lists. */
function volumeListOps(vmi: VirtualMachineInstance, volumes: Volume[], disks: Disk[]): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const put = (path: string, before: unknown[] | undefined, after: unknown[]) => {
    if (before === undefined || before.length === 0) ops.push({ op: 'test', path, value: before ?? null }, { op: 'add', path, value: after });
    else ops.push({ op: 'test', path, value: before }, { op: 'replace', path, value: after });
  };
  put('/spec/volumes', vmi.spec.volumes, volumes);
  put('/spec/domain/devices/disks', vmi.spec.domain.devices.disks, disks);
  return ops;
}

async function patchVmiVolumes(vmi: VirtualMachineInstance, volumes: Volume[], disks: Disk[], deps: VmDeps): Promise<VirtualMachineInstance> {
  return deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops: volumeListOps(vmi, volumes, disks) });
}

/** Runs the step; `vmi` is the VM's own VMI, if any. */
export async function syncVolumeHotplug(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, config: ClusterConfig, deps: VmDeps): Promise<VolumeHotplugResult> {
  const requests = vm.status?.volumeRequests ?? [];
  let current = vmi;
  if (requests.length > 0) {
    // The running VMI first (as KubeVirt's subresource calls come before its VM update).
    const pending = vmiVolumeRequests(current, requests);
    if (current && pending.length > 0) {
      try {
        const spec = applyVolumeRequests(current.spec, pending);
        current = await patchVmiVolumes(current, spec.volumes ?? [], spec.domain.devices.disks ?? [], deps);
      } catch (err) {
        return { vm, vmi, error: { reason: 'HotPlugVolumeError', message: `Error encountered while handling volume hotplug requests: ${errorText(err)}`, requeue: true } };
      }
    }
    const template = vm.spec.template.spec;
    if (template) {
      const next = applyVolumeRequests(template, requests);
      const ops: JsonPatchOperation[] = [];
      const tv = template.volumes;
      const td = template.domain.devices.disks;
      if (JSON.stringify(next.volumes) !== JSON.stringify(tv)) ops.push({ op: 'test', path: '/spec/template/spec/volumes', value: tv ?? null }, { op: tv ? 'replace' : 'add', path: '/spec/template/spec/volumes', value: next.volumes ?? [] });
      if (JSON.stringify(next.domain.devices.disks) !== JSON.stringify(td)) ops.push({ op: 'test', path: '/spec/template/spec/domain/devices/disks', value: td ?? null }, { op: td ? 'replace' : 'add', path: '/spec/template/spec/domain/devices/disks', value: next.domain.devices.disks ?? [] });
      if (ops.length > 0) {
        try {
          vm = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops });
        } catch (err) {
          return { vm, vmi: current, error: { reason: 'FailedUpdateError', message: `Error encountered when trying to update vm according to add volume request: ${errorText(err)}`, requeue: true } };
        }
      }
    }
  }
  if (declarativeHotplugApplies(vm, current, config)) {
    const change = declarativeVolumeChange(vm, current);
    if (change) {
      try {
        current = await patchVmiVolumes(current, change.volumes, change.disks, deps);
      } catch (err) {
        return { vm, vmi: current, error: { reason: 'HotPlugVolumeError', message: `Error encountered while handling declarative hotplug volumes: ${errorText(err)}`, requeue: true } };
      }
    }
  }
  return { vm, vmi: current };
}

