/**
 * The compute container's requests and limits (KubeVirt's `ResourceRenderer` with its
 * `VMIResourcePredicates`). Two layers: what the user asked for ("vm" values, which win) and
 * what was calculated; rules run in KubeVirt's order because later ones read earlier results
 * (overcommit before overhead, pinning before overhead, …).
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import { AUTO_MEMORY_LIMITS_RATIO_LABEL, EMULATOR_THREAD_EVEN_PARITY_ANNOTATION } from '../api/well-known.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import {
  addQuantity, formatQuantity, isZero, parseQuantity, quantityOf, quantityValue, subQuantity, type Quantity,
} from '../api/quantity.ts';
import { guestMemory, hugepageSize, isCpuDedicated, topologyVcpus, vmiResources } from './vmi-traits.ts';
import { hasPersistentReservation, PR_HELPER_RESOURCE } from './persistent-reservation.ts';

type ResourceList = Record<string, Quantity>;

/** What the renderer knows about the VMI's namespace (ResourceQuotas, labels); optional. */
export interface NamespaceInfo {
  labels?: Record<string, string>;
  /** A ResourceQuota in the namespace sets `limits.memory`. */
  quotaLimitsMemory?: boolean;
  /** A ResourceQuota in the namespace sets `limits.cpu` (or the auto-CPU-limit selector matches). */
  quotaLimitsCpu?: boolean;
}

/** Requests/limits as the pod carries them: canonical quantity strings, keys sorted. */
export interface RenderedResources {
  requests: Record<string, string>;
  limits: Record<string, string>;
  /** DRA: the pod resource claims (and requests in them) the compute container uses. */
  claims?: { name: string; request?: string }[];
}

const ONE = quantityOf(1);
const EPHEMERAL_STORAGE_OVERHEAD = parseQuantity('50M');

function toStrings(list: ResourceList): Record<string, string> {
  return Object.fromEntries(Object.keys(list).sort().map((k) => [k, formatQuantity(list[k] as Quantity)]));
}

/** Go's `%g` for a float64 (shortest representation, exponent form from 1e21 in JS / 1e6 here rarely matters). */
function goG(x: number): string {
  const s = String(x);
  if (Math.abs(x) >= 1e21 || (x !== 0 && Math.abs(x) < 1e-4)) return x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return s;
}

/** The memory request the renderer starts from when the user gave none (overcommit applied). */
function defaultMemoryRequest(vmi: VirtualMachineInstance, config: ClusterConfig): Quantity | undefined {
  const base = guestMemory(vmi) ?? hugepageSize(vmi);
  if (!base || quantityValue(base) <= 0n) return undefined;
  if (config.memoryOvercommit === 100) return base;
  return quantityOf((quantityValue(base) * 100n) / BigInt(Math.trunc(config.memoryOvercommit)), base.format);
}

/**
 * Renders the compute container's resources for `overheadBytes` of memory overhead (see
 * `memoryOverhead`). Every term of reference §b.6 is applied in KubeVirt's order.
 */
export function renderResources(
  vmi: VirtualMachineInstance,
  config: ClusterConfig,
  overheadBytes: bigint,
  ns: NamespaceInfo = {},
  networkResources: Readonly<Record<string, string>> = {},
): RenderedResources {
  const user = vmiResources(vmi);
  const vmRequests: ResourceList = { ...user.requests };
  const vmLimits: ResourceList = { ...user.limits };
  const calcRequests: ResourceList = {};
  const calcLimits: ResourceList = {};
  const overhead = quantityOf(overheadBytes);
  const devices = vmi.spec.domain.devices;
  const cpu = vmi.spec.domain.cpu;
  const ioThreads = BigInt(vmi.spec.domain.ioThreads?.supplementalPoolThreadCount ?? 0);

  // 1. ephemeral storage for the launcher's own files.
  vmRequests['ephemeral-storage'] = addQuantity(vmRequests['ephemeral-storage'] ?? quantityOf(0), EPHEMERAL_STORAGE_OVERHEAD);
  if (vmLimits['ephemeral-storage']) vmLimits['ephemeral-storage'] = addQuantity(vmLimits['ephemeral-storage'], EPHEMERAL_STORAGE_OVERHEAD);

  // 2. device-plugin resources the launcher always needs (into the user layer, so they win).
  const ifaces = devices.interfaces ?? [];
  if (ifaces.length > 0 || devices.autoattachPodInterface !== false) vmLimits['devices.kubevirt.io/tun'] = ONE;
  if (ifaces.some((i) => !i.model || i.model === 'virtio') && !config.useEmulation) vmLimits['devices.kubevirt.io/vhost-net'] = ONE;
  if (!config.useEmulation) vmLimits[`devices.kubevirt.io/${config.hypervisor}`] = ONE;
  if (devices.autoattachVSOCK === true) vmLimits['devices.kubevirt.io/vhost-vsock'] = ONE;

  // 4a. memory request when none was given: the limit, else guest/hugepage size over overcommit.
  if (isZero(vmRequests['memory'])) {
    if (!isZero(vmLimits['memory'])) vmRequests['memory'] = vmLimits['memory'] as Quantity;
    else {
      const def = defaultMemoryRequest(vmi, config);
      if (def) vmRequests['memory'] = def;
    }
  }

  if (cpu && isCpuDedicated(vmi)) {
    // 4b. dedicated CPUs: whole cores, request = limit.
    const vcpus = BigInt(topologyVcpus(cpu));
    if (vcpus !== 0n) {
      vmLimits['cpu'] = quantityOf(vcpus + ioThreads, 'BinarySI');
      vmRequests['cpu'] = quantityOf(vcpus + ioThreads, 'BinarySI');
    } else {
      if (vmLimits['cpu']) vmLimits['cpu'] = addQuantity(vmLimits['cpu'], quantityOf(ioThreads, 'BinarySI'));
      if (vmRequests['cpu']) vmRequests['cpu'] = addQuantity(vmRequests['cpu'], quantityOf(ioThreads, 'BinarySI'));
    }
    if (cpu.isolateEmulatorThread) {
      let extra = 1n;
      const limit = vmLimits['cpu'] ? quantityValue(vmLimits['cpu']) : 0n;
      const additional = vmi.spec.domain.ioThreadsPolicy === 'supplementalPool' ? ioThreads : 0n;
      if (vmi.metadata?.annotations?.[EMULATOR_THREAD_EVEN_PARITY_ANNOTATION] !== undefined && (limit + additional) % 2n === 0n) extra = 2n;
      vmLimits['cpu'] = addQuantity(vmLimits['cpu'] ?? quantityOf(0, 'BinarySI'), quantityOf(extra, 'BinarySI'));
      if (vmRequests['cpu']) vmRequests['cpu'] = addQuantity(vmRequests['cpu'], quantityOf(extra, 'BinarySI'));
    }
    if (vmRequests['memory']) vmLimits['memory'] = vmRequests['memory'];
  } else {
    // 4c. shared CPUs: vCPUs / cpuAllocationRatio, as Go's %g prints it ("300m", "1.2").
    const vcpus = cpu ? BigInt(topologyVcpus(cpu)) : 1n;
    const total = vcpus + ioThreads;
    if (total !== 0n && config.cpuAllocationRatio > 0) {
      const ratio = Math.trunc(config.cpuAllocationRatio);
      let val = Number(total) / ratio;
      let text = goG(val);
      if (val < 1) {
        val *= 1000;
        text = `${goG(val)}m`;
      }
      calcRequests['cpu'] = parseQuantity(text, 'spec.domain.cpu');
      const autoCpuLimits = user.limits['cpu'] === undefined && ns.quotaLimitsCpu === true;
      if (autoCpuLimits) calcLimits['cpu'] = quantityOf(total);
    }
  }

  const pageSize = vmi.spec.domain.memory?.hugepages?.pageSize;
  if (pageSize !== undefined) {
    // 4d. hugepages back the guest; the pod's memory request keeps only what is not guest RAM.
    hugepageSize(vmi);
    const guest = guestMemory(vmi);
    let hpReq: Quantity = vmRequests['memory'] ?? quantityOf(0);
    const reqBytes = vmRequests['memory'] ? quantityValue(vmRequests['memory']) : 0n;
    const limBytes = vmLimits['memory'] ? quantityValue(vmLimits['memory']) : 0n;
    if (guest && reqBytes > quantityValue(guest)) hpReq = guest;
    calcRequests[`hugepages-${pageSize}`] = hpReq;
    calcLimits[`hugepages-${pageSize}`] = hpReq;
    // Built as KubeVirt builds them, from a zero that takes the format of what is added first
    // (the request or limit when above the guest, else the overhead): `803Mi`, not `842006528`.
    let reqDiff = quantityOf(0);
    let limDiff = quantityOf(0);
    if (guest) {
      if (reqBytes > quantityValue(guest)) reqDiff = subQuantity(addQuantity(reqDiff, vmRequests['memory'] as Quantity), guest);
      if (limBytes > quantityValue(guest)) limDiff = subQuantity(addQuantity(limDiff, vmLimits['memory'] as Quantity), guest);
    }
    vmRequests['memory'] = addQuantity(reqDiff, overhead);
    if (vmLimits['memory']) vmLimits['memory'] = addQuantity(limDiff, overhead);
  } else {
    // 4e. the overhead on top of the guest's memory.
    const memReq = vmRequests['memory'] ?? quantityOf(0);
    vmRequests['memory'] = vmi.spec.domain.resources?.overcommitGuestOverhead === true ? memReq : addQuantity(memReq, overhead);
    if (vmLimits['memory']) vmLimits['memory'] = addQuantity(vmLimits['memory'], overhead);
  }

  // 4f. automatic memory limits, only when a ResourceQuota in the namespace demands limits.
  if (user.limits['memory'] === undefined && ns.quotaLimitsMemory === true) {
    const label = ns.labels?.[AUTO_MEMORY_LIMITS_RATIO_LABEL];
    const parsed = label === undefined ? NaN : Number(label);
    const ratio = Number.isFinite(parsed) && parsed >= 1 ? parsed : 2.0;
    const req = vmRequests['memory'] ?? quantityOf(0);
    calcLimits['memory'] = quantityOf(BigInt(Math.trunc(Number(quantityValue(req)) * ratio)), req.format);
  }

  // 4g. device plugins: one of each requested device, in requests and limits.
  const bump = (name: string) => {
    const merged = { ...calcLimits, ...vmLimits };
    const mergedReq = { ...calcRequests, ...vmRequests };
    calcLimits[name] = merged[name] ? addQuantity(merged[name], ONE) : ONE;
    calcRequests[name] = mergedReq[name] ? addQuantity(mergedReq[name], ONE) : ONE;
  };
  // A device from a device plugin is one of its resource; one from a DRA claim (its gate on) is
  // a claim of the compute container instead, after every plugin device of its kind.
  const claims: { name: string; request?: string }[] = [];
  const claimOf = (d: { claimName?: string; requestName?: string }) => claims.push({ name: d.claimName ?? '', ...(d.requestName ? { request: d.requestName } : {}) });
  for (const g of devices.gpus ?? []) if (g.deviceName && !g.claimName) bump(g.deviceName);
  if (config.featureGates.has('GPUsWithDRA')) for (const g of devices.gpus ?? []) if (!g.deviceName && g.claimName) claimOf(g);
  for (const h of devices.hostDevices ?? []) if (h.deviceName && !h.claimName) bump(h.deviceName);
  if (config.featureGates.has('HostDevicesWithDRA')) for (const h of devices.hostDevices ?? []) if (!h.deviceName && h.claimName) claimOf(h);
  const ls = vmi.spec.domain.launchSecurity;
  if (ls?.sev !== undefined || ls?.snp !== undefined) bump('devices.kubevirt.io/sev');
  if (ls?.tdx !== undefined) bump('devices.kubevirt.io/tdx');
  if (hasPersistentReservation(vmi)) bump(PR_HELPER_RESOURCE);
  if (config.featureGates.has('IOMMUFD')) bump('devices.kubevirt.io/iommufd');
  // The Multus networks' SR-IOV (or other device-plugin) resources, one per network (KubeVirt's WithNetworkResources).
  for (const r of Object.values(networkResources)) if (r) bump(r);

  return {
    requests: toStrings({ ...calcRequests, ...vmRequests }),
    limits: toStrings({ ...calcLimits, ...vmLimits }),
    ...(claims.length > 0 ? { claims } : {}),
  };
}
