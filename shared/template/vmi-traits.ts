/**
 * Small questions the template service asks about a VMI (KubeVirt's `vmitrait` and the helper
 * methods on its API types), each answered once here so every renderer agrees.
 */
import type { CPU, VirtualMachineInstance } from '../api/index.ts';
import { NONROOT_ANNOTATION } from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { compareQuantity, isZero, parseQuantity, type Quantity } from '../api/quantity.ts';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The user's `spec.domain.resources` parsed, with the field path in any error. */
export interface VmiResources {
  requests: Record<string, Quantity>;
  limits: Record<string, Quantity>;
}

function parseList(list: Record<string, string | number> | undefined, at: string): Record<string, Quantity> {
  const out: Record<string, Quantity> = {};
  for (const [k, v] of Object.entries(list ?? {})) {
    const q = parseQuantity(v, `${at}.${k}`);
    if (q.nanos < 0n) throw new InvalidInputError(`${at}.${k}`, `must not be negative, got '${v}'`);
    out[k] = q;
  }
  return out;
}

/** `spec.domain.resources` as exact quantities. */
export function vmiResources(vmi: VirtualMachineInstance): VmiResources {
  const r = vmi.spec.domain.resources;
  return {
    requests: parseList(r?.requests, 'spec.domain.resources.requests'),
    limits: parseList(r?.limits, 'spec.domain.resources.limits'),
  };
}

/** cores × sockets × threads, skipping zeros (`hardware.GetNumberOfVCPUs`). */
export function topologyVcpus(cpu: CPU): number {
  let n = 0;
  for (const f of [cpu.cores, cpu.sockets, cpu.threads]) {
    if (f) n = n === 0 ? f : n * f;
  }
  return n;
}

export function isCpuDedicated(vmi: VirtualMachineInstance): boolean {
  return vmi.spec.domain.cpu?.dedicatedCpuPlacement === true;
}

/** CPU request non-zero and equal to the limit, and memory request == limit (or only a limit). */
export function wantsGuaranteedQos(res: VmiResources): boolean {
  const { requests, limits } = res;
  const memReq = requests['memory'];
  const memLim = limits['memory'];
  const zero = { nanos: 0n, format: 'DecimalSI' } as const;
  const memoryWantsIt = (isZero(memReq) && !isZero(memLim)) ||
    (!isZero(memReq) && compareQuantity(memReq ?? zero, memLim ?? zero) === 0);
  const cpuReq = requests['cpu'];
  const cpuWantsIt = !isZero(cpuReq) && compareQuantity(cpuReq ?? zero, limits['cpu'] ?? zero) === 0;
  return memoryWantsIt && cpuWantsIt;
}

/** Host devices, GPUs or SR-IOV interfaces need VFIO (all guest RAM locked). */
export function hasVfio(vmi: VirtualMachineInstance): boolean {
  const d = vmi.spec.domain.devices;
  return (d.hostDevices?.length ?? 0) > 0 || (d.gpus?.length ?? 0) > 0 || (d.interfaces ?? []).some((i) => i.sriov !== undefined);
}

/** Non-root launcher: annotation `kubevirt.io/nonroot` present, or `status.runtimeUser` ≠ 0. */
export function isNonRoot(vmi: VirtualMachineInstance): boolean {
  if (vmi.metadata?.annotations?.[NONROOT_ANNOTATION] !== undefined) return true;
  return (vmi.status?.runtimeUser ?? 0) !== 0;
}

export function hugepageSize(vmi: VirtualMachineInstance): Quantity | undefined {
  const hp = vmi.spec.domain.memory?.hugepages;
  if (!hp) return undefined;
  if (!hp.pageSize) throw new InvalidInputError('spec.domain.memory.hugepages.pageSize', 'is required when hugepages are requested');
  return parseQuantity(hp.pageSize, 'spec.domain.memory.hugepages.pageSize');
}

export function guestMemory(vmi: VirtualMachineInstance): Quantity | undefined {
  const g = vmi.spec.domain.memory?.guest;
  return g === undefined ? undefined : parseQuantity(g, 'spec.domain.memory.guest');
}

export function hasTpm(vmi: VirtualMachineInstance): boolean {
  const tpm = vmi.spec.domain.devices.tpm;
  return tpm !== undefined && tpm.enabled !== false;
}

export function isSev(vmi: VirtualMachineInstance): boolean {
  const ls = vmi.spec.domain.launchSecurity;
  return ls?.sev !== undefined || ls?.snp !== undefined;
}

export function vmiName(vmi: VirtualMachineInstance): string {
  const name = vmi.metadata?.name;
  if (!name) throw new InvalidInputError('metadata.name', 'is required');
  // The apiserver only admits DNS-1123 subdomain names; anything else cannot be a real VMI.
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) throw new InvalidInputError('metadata.name', `'${name}' is not a DNS-1123 subdomain`);
  return name;
}

export function vmiNamespace(vmi: VirtualMachineInstance): string {
  const ns = vmi.metadata?.namespace;
  if (!ns) throw new InvalidInputError('metadata.namespace', 'is required');
  return ns;
}

export function vmiUid(vmi: VirtualMachineInstance): string {
  const uid = vmi.metadata?.uid;
  if (!uid) throw new InvalidInputError('metadata.uid', 'is required (the apiserver assigns it)');
  return uid;
}
