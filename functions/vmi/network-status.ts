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
 *    not reported → `multus-status` removed from its `infoSource`, the entry kept (its pod interface set);
 * 3. existing entries of DRA (`resourceClaim`) networks;
 * 4. existing entries that match no spec network (what the guest agent discovered).
 * An annotation that does not parse counts as empty (KubeVirt only logs it).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceNetworkInterface } from '../../shared/api/index.ts';
import { addInfoSource, INFO_SOURCE_MULTUS_STATUS, removeInfoSource } from '../../shared/network/info-source.ts';
import { nameSchemeFromStatuses, PRIMARY_POD_INTERFACE } from '../../shared/network/name-scheme.ts';
import { networkStatusesFromPod } from '../../shared/network/network-status.ts';

/** The VMI's `status.interfaces` as the pod's network status makes them. */
export function interfacesFromPod(vmi: VirtualMachineInstance, pod: V1Pod): VirtualMachineInstanceNetworkInterface[] {
  const existing = vmi.status?.interfaces ?? [];
  const byName = new Map(existing.map((i) => [i.name ?? '', i]));
  const networks = vmi.spec.networks ?? [];
  const status = networkStatusesFromPod(pod);
  const out: VirtualMachineInstanceNetworkInterface[] = [];
  const primary = networks.find((n) => n.pod !== undefined || n.multus?.default === true);
  if (primary) {
    const podInterfaceName = status.find((e) => e.default === true)?.interface ?? PRIMARY_POD_INTERFACE;
    out.push({ ...byName.get(primary.name), name: primary.name, podInterfaceName });
  }
  const scheme = nameSchemeFromStatuses(networks, status);
  const reported = new Set(status.map((e) => e.interface ?? ''));
  for (const n of networks) {
    if (!n.multus || n.multus.default) continue;
    const podIface = scheme.get(n.name) ?? '';
    const old = byName.get(n.name);
    const inMultus = reported.has(podIface);
    if (inMultus && !old) out.push({ name: n.name, infoSource: INFO_SOURCE_MULTUS_STATUS, podInterfaceName: podIface });
    else if (inMultus && old) out.push(omitUndefined({ ...old, infoSource: addInfoSource(old.infoSource, INFO_SOURCE_MULTUS_STATUS), podInterfaceName: podIface }));
    else if (old) out.push(omitUndefined({ ...old, infoSource: removeInfoSource(old.infoSource, INFO_SOURCE_MULTUS_STATUS), podInterfaceName: podIface }));
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
