/**
 * The defaults KubeVirt's VMI mutating webhook applies on CREATE (reference §0,
 * `pkg/defaults/defaults.go`). On a real cluster the webhook has already done this before any
 * controller sees the VMI; this pure step exists for VMIs that never went through an apiserver
 * (the `render` CLI, tests, fixtures). It never touches its input: it returns a defaulted copy.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../api/index.ts';
import { NON_ROOT_UID, VMI_FINALIZER } from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { archSettings, gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { parseQuantity, quantityValue } from '../api/quantity.ts';

/** Stand-in identity for a VMI that has none yet (the apiserver would assign it). */
export interface StandInIdentity {
  namespace?: string;
  uid?: string;
}

/**
 * Returns `vmi` with the mutating webhook's defaults: phase Pending, the VMI finalizer,
 * runtimeUser 107 (unless the Root gate is on), architecture, machine type, cpu request from a
 * lone cpu limit, guest memory, CPU topology and model, containerDisk pull policies, the default
 * pod network and interface, a disk for every volume without one, eviction strategy and the
 * memory/CPU status fields. A real cluster's webhook does this; call it only for VMIs that
 * bypassed one.
 */
export function applyVmiDefaults(input: VirtualMachineInstance, config: ClusterConfig): VirtualMachineInstance {
  const vmi = structuredClone(input);
  vmi.metadata ??= {};
  const spec = vmi.spec;
  if (!spec?.domain) throw new InvalidInputError('spec.domain', 'is required');
  setSpecDefaults(spec, config);
  const cpu = (spec.domain.cpu ??= {});
  const memory = (spec.domain.memory ??= {});
  cpu.model ||= config.cpuModel || 'host-model';

  const status = (vmi.status ??= {});
  status.phase ||= 'Pending';
  if (status.runtimeUser === undefined && !gateEnabled(config, 'Root')) status.runtimeUser = NON_ROOT_UID;
  if (memory.guest !== undefined && status.memory === undefined) {
    status.memory = { guestAtBoot: memory.guest, guestCurrent: memory.guest, guestRequested: memory.guest };
  }
  status.currentCPUTopology ??= { sockets: cpu.sockets ?? 0, cores: cpu.cores ?? 0, threads: cpu.threads ?? 0 };
  const finalizers = (vmi.metadata.finalizers ??= []);
  if (!finalizers.includes(VMI_FINALIZER)) finalizers.push(VMI_FINALIZER);
  return vmi;
}

/**
 * KubeVirt's `SetDefaultVirtualMachineInstanceSpec` on a copy of `spec`: architecture, machine
 * type, a cpu request from a lone cpu limit, guest memory, CPU topology, containerDisk pull
 * policies, eviction strategy, the default pod network and interface, a disk for every volume
 * without one. The VMI webhook applies it (with more, {@link applyVmiDefaults}); the instance type
 * expansion into a VM's template applies it alone (reference-vm-vmi-depth §1.6).
 */
export function vmiSpecDefaults(input: VirtualMachineInstanceSpec, config: ClusterConfig): VirtualMachineInstanceSpec {
  const spec = structuredClone(input);
  setSpecDefaults(spec, config);
  return spec;
}

/**
 * KubeVirt's `SetDefaultVolumeDisk` and `SetDefaultNetworkInterface` on a copy of `spec`: what the
 * instance type expansion adds before applying (so preferences reach those disks and that
 * interface), reference-vm-vmi-depth §1.6.
 */
export function withDefaultDisksAndInterface(input: VirtualMachineInstanceSpec, config: ClusterConfig): VirtualMachineInstanceSpec {
  const spec = structuredClone(input);
  spec.domain.devices ??= {};
  setDefaultVolumeDisks(spec);
  setDefaultNetworkInterface(spec, config);
  return spec;
}

function setSpecDefaults(spec: VirtualMachineInstanceSpec, config: ClusterConfig): void {
  spec.domain.devices ??= {};
  spec.architecture ||= config.defaultArchitecture;
  spec.domain.machine ??= {};
  spec.domain.machine.type ||= archSettings(config, spec.architecture).machineType;

  const res = (spec.domain.resources ??= {});
  const cpuLimit = res.limits?.['cpu'];
  const cpuRequest = res.requests?.['cpu'];
  const nonZero = (q: string | number | undefined, f: string) => q !== undefined && parseQuantity(q, f).nanos !== 0n;
  if (nonZero(cpuLimit, 'spec.domain.resources.limits.cpu') && !nonZero(cpuRequest, 'spec.domain.resources.requests.cpu')) {
    res.requests = { ...(res.requests ?? {}), cpu: cpuLimit as string | number };
  }

  const memory = (spec.domain.memory ??= {});
  if (memory.guest === undefined) {
    const req = res.requests?.['memory'];
    const lim = res.limits?.['memory'];
    if (nonZero(req, 'spec.domain.resources.requests.memory')) memory.guest = req as string | number;
    else if (nonZero(lim, 'spec.domain.resources.limits.memory')) memory.guest = lim as string | number;
    else if (memory.hugepages?.pageSize) memory.guest = memory.hugepages.pageSize;
  }

  const cpu = (spec.domain.cpu ??= {});
  if (!cpu.cores && !cpu.sockets && !cpu.threads) {
    // Sockets give the best guest performance when the topology is derived from resources.
    const q = res.limits?.['cpu'] ?? res.requests?.['cpu'];
    const sockets = q === undefined ? 1 : Number(quantityValue(parseQuantity(q, 'spec.domain.resources.requests.cpu')));
    Object.assign(cpu, { sockets, cores: 1, threads: 1 });
  }

  for (const v of spec.volumes ?? []) {
    const cd = v.containerDisk;
    if (cd && !cd.imagePullPolicy) {
      cd.imagePullPolicy = cd.image?.endsWith(':latest') || !/[:@]/.test(cd.image ?? '') ? 'Always' : 'IfNotPresent';
    }
  }

  if (spec.evictionStrategy === undefined && config.evictionStrategy !== undefined) spec.evictionStrategy = config.evictionStrategy;
  setDefaultNetworkInterface(spec, config);
  setDefaultVolumeDisks(spec);
}

/**
 * KubeVirt's `SetDefaultNetworkInterface`: a spec that names no interface and no network (and does
 * not turn `autoattachPodInterface` off) gets the pod network on the cluster's
 * `network.defaultNetworkInterface` binding, named `default`. Undefined when nothing is added;
 * `error` (KubeVirt's message) when the cluster's default cannot be used.
 */
export function defaultPodInterface(spec: VirtualMachineInstanceSpec, config: ClusterConfig): { interfaces: NonNullable<VirtualMachineInstanceSpec['domain']['devices']['interfaces']>; networks: NonNullable<VirtualMachineInstanceSpec['networks']> } | { error: string } | undefined {
  const devices = spec.domain.devices ?? {};
  if (devices.autoattachPodInterface === false || (spec.networks ?? []).length > 0 || (devices.interfaces ?? []).length > 0) return undefined;
  const kind = config.defaultNetworkInterface;
  if (kind === 'bridge' && !config.permitBridgeInterfaceOnPodNetwork) return { error: 'bridge interface is not enabled in kubevirt-config' };
  if (kind === 'slirp') return { error: 'slirp interface is deprecated as of v1.3' };
  return { interfaces: [kind === 'masquerade' ? { name: 'default', masquerade: {} } : { name: 'default', bridge: {} }], networks: [{ name: 'default', pod: {} }] };
}

/** The pod network on the cluster's default interface kind, when the spec names no interface and no network. */
function setDefaultNetworkInterface(spec: VirtualMachineInstanceSpec, config: ClusterConfig): void {
  const added = defaultPodInterface(spec, config);
  if (added === undefined) return;
  if ('error' in added) throw new InvalidInputError('spec.domain.devices.interfaces', added.error);
  spec.domain.devices.interfaces = added.interfaces;
  spec.networks = added.networks;
}

/** A disk (no device type) for every volume no disk or filesystem names. */
function setDefaultVolumeDisks(spec: VirtualMachineInstanceSpec): void {
  const devices = spec.domain.devices;
  const named = new Set([...(devices.disks ?? []).map((d) => d.name), ...(devices.filesystems ?? []).map((f) => f.name)]);
  for (const v of spec.volumes ?? []) {
    if (!named.has(v.name)) (devices.disks ??= []).push({ name: v.name });
  }
}

/**
 * Fills in what an apiserver would have assigned (namespace `default`, a UID derived from
 * namespace/name so output is reproducible). For the CLI and fixtures only.
 */
export function withStandInIdentity(input: VirtualMachineInstance, identity: StandInIdentity = {}): VirtualMachineInstance {
  const vmi = structuredClone(input);
  vmi.metadata ??= {};
  vmi.metadata.namespace ||= identity.namespace ?? 'default';
  if (!vmi.metadata.uid) {
    const seed = `${vmi.metadata.namespace}/${vmi.metadata.name ?? ''}`;
    let h = 0x811c9dc5;
    const hex: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const ch of `${round}:${seed}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
      hex.push(h.toString(16).padStart(8, '0'));
    }
    const s = hex.join('');
    vmi.metadata.uid = identity.uid ?? `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-8${s.slice(17, 20)}-${s.slice(20, 32)}`;
  }
  return vmi;
}
