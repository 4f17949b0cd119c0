/**
 * `status.interfaces` from the launcher pod's `k8s.v1.cni.cncf.io/network-status` annotation
 * (reference-vm-vmi-depth §6, KubeVirt's network `UpdateVMIStatus`), at the hand-off and on every
 * Running pass. Pure. The result, in order:
 * 1. the primary network (the first pod or Multus-default network) → `{name, podInterfaceName}`,
 *    the pod interface being the network-status entry with `default: true`, else `eth0`; other
 *    fields of an existing entry are kept;
 * 2. each secondary Multus network, in spec order, its pod interface named as the pod names them
 *    (ordinal `net<N>` when the network-status has such an interface, else the hashed name):
 *    reported by Multus and new → `{name, infoSource: "multus-status", podInterfaceName}`; reported
 *    and existing → `multus-status` added to its `infoSource`, `podInterfaceName` set; existing but
 *    not reported → `multus-status` removed from its `infoSource`, the entry kept;
 * 3. existing entries of DRA (`resourceClaim`) networks;
 * 4. existing entries that match no spec network (what the guest agent discovered).
 * An annotation that does not parse counts as empty (KubeVirt only logs it).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceNetworkInterface } from '../../shared/api/index.ts';
import { hashedPodInterfaceName } from '../../shared/template/render-metadata.ts';

export const NETWORK_STATUS_ANNOTATION = 'k8s.v1.cni.cncf.io/network-status';
const MULTUS_STATUS = 'multus-status';

/** One element of the network-status annotation (the fields read here). */
interface NetworkStatusEntry {
  readonly name?: string;
  readonly interface?: string;
  readonly default?: boolean;
}

function parseNetworkStatus(pod: V1Pod): NetworkStatusEntry[] {
  const raw = pod.metadata?.annotations?.[NETWORK_STATUS_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? (parsed.filter((e) => typeof e === 'object' && e !== null) as NetworkStatusEntry[]) : [];
  } catch {
    return [];
  }
}

function withSource(sources: string | undefined, add: boolean): string | undefined {
  const list = (sources ?? '').split(',').map((s) => s.trim()).filter(Boolean).filter((s) => s !== MULTUS_STATUS);
  if (add) list.push(MULTUS_STATUS);
  return list.length > 0 ? list.join(', ') : undefined;
}

/** The VMI's `status.interfaces` as the pod's network status makes them. */
export function interfacesFromPod(vmi: VirtualMachineInstance, pod: V1Pod): VirtualMachineInstanceNetworkInterface[] {
  const existing = vmi.status?.interfaces ?? [];
  const byName = new Map(existing.map((i) => [i.name ?? '', i]));
  const networks = vmi.spec.networks ?? [];
  const status = parseNetworkStatus(pod);
  const out: VirtualMachineInstanceNetworkInterface[] = [];
  const primary = networks.find((n) => n.pod !== undefined || n.multus?.default === true);
  if (primary) {
    const podInterfaceName = status.find((e) => e.default === true)?.interface ?? 'eth0';
    out.push({ ...byName.get(primary.name), name: primary.name, podInterfaceName });
  }
  const ordinal = status.some((e) => /^net\d+$/.test(e.interface ?? ''));
  const reported = new Set(status.map((e) => e.interface ?? ''));
  let index = 0;
  for (const n of networks) {
    if (!n.multus || n.multus.default) continue;
    index++;
    const podIface = ordinal ? `net${index}` : hashedPodInterfaceName(n.name);
    const old = byName.get(n.name);
    const inMultus = reported.has(podIface);
    if (inMultus && !old) out.push({ name: n.name, infoSource: MULTUS_STATUS, podInterfaceName: podIface });
    else if (inMultus && old) out.push(omitUndefined({ ...old, infoSource: withSource(old.infoSource, true), podInterfaceName: podIface }));
    else if (old) out.push(omitUndefined({ ...old, infoSource: withSource(old.infoSource, false) }));
  }
  for (const n of networks) {
    if (n.resourceClaim !== undefined && byName.has(n.name)) out.push(byName.get(n.name)!);
  }
  const specNames = new Set(networks.map((n) => n.name));
  for (const i of existing) if (!specNames.has(i.name ?? '')) out.push(i);
  return out;
}

/** True when `a` and `b` hold the same interfaces, compared as sets sorted by name (KubeVirt's rule for writing). */
export function sameInterfaces(a: readonly VirtualMachineInstanceNetworkInterface[], b: readonly VirtualMachineInstanceNetworkInterface[]): boolean {
  const key = (l: readonly VirtualMachineInstanceNetworkInterface[]) => JSON.stringify([...l].sort((x, y) => (x.name ?? '').localeCompare(y.name ?? '')).map((i) => Object.entries(i).sort(([p], [q]) => p.localeCompare(q))));
  return key(a) === key(b);
}

function omitUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
