/**
 * virt-handler's start preconditions, in KubeVirt's order (`pkg/virt-handler/vm.go`
 * `vmUpdateHelperDefault` → `handleStartingVMI`; `controller.go` `setupDevicesOwnerships`,
 * `claimDeviceOwnership`; `non-root.go` `nonRootSetup`, `changeOwnershipOfBlockDevices`,
 * `prepareNetwork`; `pkg/host-disk/host-disk.go` `ReplacePVCByHostDisk`), as a pure function of
 * the VMI, its launcher pod and the node. What a real handler finds in the launcher's mount
 * namespace is derived from what the pod was allocated: a device is there when the pod asked the
 * device plugin for it and the node's kubelet has that plugin registered (node capacity), so a pod
 * that was admitted on a node without the resource runs without the device, as on a real node.
 *
 * The outcomes: `ok` (the domain can be defined), `wait` (re-queued without an error: hotplug
 * volumes not mounted yet), or a sync error with KubeVirt's text, `critical` when it fails the VMI
 * (a `CriticalNetworkError`).
 */
import { createHash } from 'node:crypto';
import { parseQuantity } from './quantity.ts';
import type { Node, Pod, Vmi } from './objects.ts';
import { volumeStatusOf, type HandlerConfig } from './vmi-migratable.ts';

export type StartVerdict = { kind: 'ok' } | { kind: 'wait'; why: string } | { kind: 'error'; message: string; critical: boolean };

export const KVM = 'devices.kubevirt.io/kvm';
export const TUN = 'devices.kubevirt.io/tun';
export const VHOST_NET = 'devices.kubevirt.io/vhost-net';
export const VHOST_VSOCK = 'devices.kubevirt.io/vhost-vsock';

type AnyMap = Record<string, unknown>;
const obj = (v: unknown): AnyMap | undefined => (typeof v === 'object' && v !== null ? (v as AnyMap) : undefined);
const list = (v: unknown): AnyMap[] => (Array.isArray(v) ? v.filter((x): x is AnyMap => obj(x) !== undefined) : []);

/** A stable stand-in for the launcher's PID (it appears in KubeVirt's path errors). */
export function launcherPid(pod: Pod): number {
  const h = createHash('sha256').update(pod.metadata?.uid ?? '').digest();
  return 1000 + (h.readUInt16BE(0) % 60000);
}

/** KubeVirt's `safepath` error for a device missing from the launcher's `/dev`. */
function missingDevice(pod: Pod, relative: string): string {
  const base = relative.slice(relative.lastIndexOf('/') + 1);
  return `failed opening ${base} for path root: /proc/${launcherPid(pod)}/root, relative: /dev/${relative}: no such file or directory`;
}

/** True when the launcher pod was given `resource` by a device plugin the node has registered. */
export function deviceAllocated(pod: Pod, node: Node | undefined, resource: string): boolean {
  const requested = (pod.spec?.containers ?? []).some((c) => Number(c.resources?.limits?.[resource] ?? c.resources?.requests?.[resource] ?? 0) > 0);
  const registered = node?.status?.capacity?.[resource] !== undefined;
  return requested && registered;
}

/** `vmitrait.IsNonRoot`: annotation `kubevirt.io/nonroot`, or `status.runtimeUser` ≠ 0. */
export function isNonRoot(vmi: Vmi): boolean {
  return vmi.metadata?.annotations?.['kubevirt.io/nonroot'] !== undefined || Number(vmi.status?.['runtimeUser'] ?? 0) !== 0;
}

function devices(vmi: Vmi): AnyMap {
  return obj(obj(vmi.spec?.domain)?.['devices']) ?? {};
}

/** `RequiresTunDevice`: any interface, or the pod interface autoattached (the default). */
export function requiresTun(vmi: Vmi): boolean {
  const d = devices(vmi);
  return list(d['interfaces']).length > 0 || d['autoattachPodInterface'] === undefined || d['autoattachPodInterface'] === true;
}

/** `RequiresVirtioNetDevice`: a virtio (or default-model) interface, without emulation. */
export function requiresVhostNet(vmi: Vmi, config: HandlerConfig): boolean {
  return !config.useEmulation && list(devices(vmi)['interfaces']).some((i) => i['model'] === undefined || i['model'] === '' || i['model'] === 'virtio');
}

/** Spec volumes that are hotpluggable (or utility volumes): the start waits for all to be mounted. */
function hasHotplugVolumes(vmi: Vmi): boolean {
  const hot = (vmi.spec?.volumes ?? []).some((v) => obj(v['persistentVolumeClaim'])?.['hotpluggable'] === true || obj(v['dataVolume'])?.['hotpluggable'] === true);
  const utility = list((vmi.spec as AnyMap | undefined)?.['utilityVolumes']).length > 0;
  return hot || utility;
}

/** `hotplugVolumesReady`: every hotplug entry `Ready` or `MountedToPod`, and some entry at all. */
function hotplugVolumesReady(vmi: Vmi): boolean {
  const statuses = (vmi.status?.['volumeStatus'] as AnyMap[] | undefined) ?? [];
  if (statuses.length === 0) return false;
  return statuses.every((s) => s['hotplugVolume'] === undefined || s['phase'] === 'Ready' || s['phase'] === 'MountedToPod');
}

const MIB = 2 ** 20;

/**
 * `ReplacePVCByHostDisk`: the filesystem claims (with claim info, not Block, not hotplugged, not
 * virtiofs) become disk images sized from the claim; answers the error and the volumes replaced.
 */
function hostDiskReplacement(vmi: Vmi): { error?: string; replaced: Set<string> } {
  const replaced = new Set<string>();
  const statuses = new Map(volumeStatusOf(vmi).map((s) => [s.name, s as AnyMap & typeof s]));
  const filesystems = new Set(list(devices(vmi)['filesystems']).map((f) => String(f['name'])));
  for (const v of vmi.spec?.volumes ?? []) {
    const claimBacked = obj(v['persistentVolumeClaim']) !== undefined || (obj(v['dataVolume']) !== undefined && obj(v['dataVolume'])!['name'] !== '');
    if (!claimBacked || filesystems.has(v.name)) continue;
    const status = statuses.get(v.name);
    if (status?.['hotplugVolume'] !== undefined) continue;
    const info = status?.persistentVolumeClaimInfo as (AnyMap & { volumeMode?: string }) | undefined;
    if (!info || info.volumeMode === 'Block') continue;
    const capacity = obj(info['capacity'])?.['storage'];
    const requests = obj(info['requests'])?.['storage'];
    if (capacity === undefined && requests === undefined) return { error: 'unable to determine capacity of HostDisk from PVC that provides no storage capacity or requests', replaced };
    const cap = capacity === undefined ? undefined : parseQuantity(String(capacity));
    const req = requests === undefined ? undefined : parseQuantity(String(requests));
    const size = req !== undefined && (cap === undefined || cap > req) ? req : cap!;
    if (Math.floor(size / MIB) * MIB === 0) return { error: `the size for volume ${v.name} is too low, must be at least 1MiB`, replaced };
    replaced.add(v.name);
  }
  return { replaced };
}

export interface StartInput {
  vmi: Vmi;
  /** The VMI's launcher pod on this node (running). */
  pod: Pod;
  node: Node | undefined;
  config: HandlerConfig;
}

/** The preconditions, in order; the first one that does not hold decides. */
export function startVerdict(input: StartInput): StartVerdict {
  const { vmi, pod, node, config } = input;
  const error = (message: string, critical = false): StartVerdict => ({ kind: 'error', message, critical });

  // 3: filesystem claims become host-disk images sized from the claim info.
  const hostDisks = hostDiskReplacement(vmi);
  if (hostDisks.error) return error(hostDisks.error);
  // 6: hotplug volumes (declarative or utility) must all be mounted before the domain starts.
  if (hasHotplugVolumes(vmi) && !hotplugVolumesReady(vmi)) return { kind: 'wait', why: 'hotplug volumes not ready' };
  // 9: the hypervisor device, unless emulation is allowed.
  if (!deviceAllocated(pod, node, KVM) && !config.useEmulation) return error(`failed to set up file ownership for /dev/kvm: ${missingDevice(pod, 'kvm')}`);
  // 10: vhost-vsock for autoattachVSOCK.
  if (devices(vmi)['autoattachVSOCK'] === true && !deviceAllocated(pod, node, VHOST_VSOCK)) {
    return error(`failed to set up file ownership for /dev/vhost-vsock: ${missingDevice(pod, 'vhost-vsock')}`);
  }
  if (!isNonRoot(vmi)) return { kind: 'ok' };
  // 13: a non-root launcher chowns its block claims, so every claim left after step 3 needs its status.
  const withInfo = new Set(volumeStatusOf(vmi).filter((s) => s.persistentVolumeClaimInfo !== undefined).map((s) => s.name));
  for (const v of vmi.spec?.volumes ?? []) {
    if (obj(v['persistentVolumeClaim']) === undefined || hostDisks.replaced.has(v.name)) continue;
    if (!withInfo.has(v.name)) return error(`missing volume status for volume ${v.name}`);
  }
  // 15: the network devices a non-root qemu opens itself; a missing one is a critical network error.
  if (requiresVhostNet(vmi, config) && !deviceAllocated(pod, node, VHOST_NET)) return error(`failed to set up vhost-net device, ${missingDevice(pod, 'vhost-net')}`, true);
  if (requiresTun(vmi) && !deviceAllocated(pod, node, TUN)) return error(`failed to set up tun device, ${missingDevice(pod, 'net/tun')}`, true);
  return { kind: 'ok' };
}
