/**
 * The VMI a VM starts (KubeVirt's `SetupVMIFromVM` + the rest of `startVMI`, reference.md §c.3):
 * the template's metadata and spec, named after the VM, controlled by it and held by its
 * finalizer until the VM controller lets go. Pure.
 */
import { legacyFirmwareUuid } from '../../shared/api/firmware-uuid.ts';
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePreferenceSpec } from '../../shared/api/index.ts';
import { applyAutoattachPreferences } from '../../shared/instancetype/apply-preference.ts';
import { KIND_VM, KIND_VMI, KUBEVIRT_API_VERSION, VM_CONTROLLER_FINALIZER } from '../../shared/api/well-known.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../shared/config/cluster-config.ts';
import { defaultPodInterface } from '../../shared/template/vmi-defaults.ts';
import { pinRevisionNames } from './instancetype/pinned.ts';
import { START_REQUEST, startRevisionName, VM_GENERATION_ANNOTATION } from './well-known.ts';

/** KubeVirt's defaults, for callers without a cluster config. */
const DEFAULT_CONFIG = clusterConfigFromKubeVirt(undefined);

/**
 * The firmware UUID a VM's VMIs get: the template's, else stable per VM name (survives restarts;
 * firmware-uuid.ts writes it into the template). An empty UUID counts as none, as upstream.
 */
export function firmwareUuid(vm: VirtualMachine): string {
  return vm.spec.template.spec?.domain.firmware?.uuid || legacyFirmwareUuid(vm.metadata?.name ?? '');
}

/**
 * The VMI to create for `vm`. A preference's `preferredAutoattach*` apply before the input device
 * and the default pod network are added (so they decide those); the rest of the instance type and
 * preference is expanded afterwards (instancetype/expand-vmi.ts).
 */
export function vmiFromVm(vm: VirtualMachine, preference?: VirtualMachinePreferenceSpec, config: ClusterConfig = DEFAULT_CONFIG): VirtualMachineInstance {
  const template = vm.spec.template;
  const spec = structuredClone(template.spec ?? { domain: { devices: {} } });
  const meta = template.metadata ?? {};
  const first = vm.status?.stateChangeRequests?.[0];
  // `virtctl start --paused` travels as data on the Start request.
  if (first?.action === START_REQUEST && first.data?.paused === 'true') spec.startStrategy = 'Paused';
  spec.domain = { ...spec.domain, firmware: { ...spec.domain.firmware, uuid: firmwareUuid(vm) } };
  applyAutoattachPreferences(preference, spec);
  addAutoattachedInput(spec);
  addDefaultPodNetwork(spec, config);
  return {
    apiVersion: KUBEVIRT_API_VERSION,
    kind: KIND_VMI,
    metadata: {
      name: vm.metadata?.name ?? '',
      namespace: vm.metadata?.namespace ?? '',
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      annotations: { ...meta.annotations, [VM_GENERATION_ANNOTATION]: String(vm.metadata?.generation ?? 1) },
      ownerReferences: [
        { apiVersion: KUBEVIRT_API_VERSION, kind: KIND_VM, name: vm.metadata?.name ?? '', uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
      finalizers: [VM_CONTROLLER_FINALIZER],
    },
    spec,
    // VMIs have no /status subresource: the revision's name is written with the object.
    status: { virtualMachineRevisionName: startRevisionName(vm.metadata?.uid ?? '', vm.metadata?.generation ?? 1) },
  };
}

/**
 * `autoattachInputDevice: true` with no inputs adds one named `default-0`. KubeVirt leaves its bus
 * and type to preferences and then to virt-api's VMI webhook (`usb`, `tablet`), as this does.
 */
function addAutoattachedInput(spec: VirtualMachineInstance['spec']): void {
  const devices = spec.domain.devices;
  if (devices.autoattachInputDevice !== true || (devices.inputs?.length ?? 0) > 0) return;
  devices.inputs = [{ name: 'default-0', type: '' }];
}

/**
 * A VM that names no interface and no network gets the pod network on an interface called
 * `default` with the cluster's default binding (`network.defaultNetworkInterface`), unless
 * `autoattachPodInterface: false`. A default the cluster refuses adds nothing here: the start
 * reports it (`podNetworkRefusal`).
 */
function addDefaultPodNetwork(spec: VirtualMachineInstance['spec'], config: ClusterConfig): void {
  const added = defaultPodInterface(spec, config);
  if (added === undefined || 'error' in added) return;
  spec.domain = { ...spec.domain, devices: { ...spec.domain.devices, interfaces: added.interfaces } };
  spec.networks = added.networks;
}

/** KubeVirt's refusal to start `vm` on the cluster's default pod interface (bridge not permitted, slirp), or undefined. */
export function podNetworkRefusal(vm: VirtualMachine, config: ClusterConfig): string | undefined {
  const added = defaultPodInterface(vm.spec.template.spec ?? { domain: { devices: {} } }, config);
  return added !== undefined && 'error' in added ? added.error : undefined;
}

/**
 * The start ControllerRevision of `vm` (reference.md §c.3): the VM's spec as the VMI is started
 * from it, with `spec.instancetype/preference.revisionName` filled from the status refs
 * (reference-vm-vmi-depth §1.5), controller-owned by the VM (so it goes with the VM).
 */
export function startRevision(vm: VirtualMachine): V1ControllerRevision {
  const generation = vm.metadata?.generation ?? 1;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: startRevisionName(vm.metadata?.uid ?? '', generation),
      namespace: vm.metadata?.namespace ?? '',
      ownerReferences: [
        { apiVersion: KUBEVIRT_API_VERSION, kind: KIND_VM, name: vm.metadata?.name ?? '', uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    data: { spec: pinRevisionNames(vm.spec, vm.status) },
    revision: generation,
  };
}
