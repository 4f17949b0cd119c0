/**
 * How a launcher pod names the interfaces of its secondary (Multus, not default) networks
 * (KubeVirt's `namescheme`): `pod` + 11 hex chars of SHA-256(network name) for pods created since
 * v1.1, `net1`, `net2`… in network order for older pods (and migration targets of such pods). The
 * primary network is `eth0`. Pure; shared by the VM and VMI controllers.
 */
import type { Network, VirtualMachineInstanceNetworkInterface } from '../api/index.ts';
import { hashedPodInterfaceName } from '../template/render-metadata.ts';
import type { NetworkStatusEntry } from './network-status.ts';

export const PRIMARY_POD_INTERFACE = 'eth0';
const ORDINAL = /^net\d+$/;

/** A Multus network that is not the pod's default network. */
export function isSecondaryMultus(net: Network): boolean {
  return net.multus !== undefined && net.multus.default !== true;
}

/** True when some pod interface is named the ordinal way (`net<N>`; `eth0` does not count). */
export function podHasOrdinalInterfaceName(statuses: readonly NetworkStatusEntry[]): boolean {
  return statuses.some((s) => ORDINAL.test(s.interface ?? ''));
}

/**
 * Network name → pod interface name for `networks`: ordinal when the pod's network status has an
 * ordinal name, else hashed; a Multus default network is `eth0`. Ordinals count the secondary
 * networks of the list given, in its order.
 */
export function nameSchemeFromStatuses(networks: readonly Network[], statuses: readonly NetworkStatusEntry[]): Map<string, string> {
  const ordinal = podHasOrdinalInterfaceName(statuses);
  const out = new Map<string, string>();
  let index = 0;
  for (const n of networks) {
    if (isSecondaryMultus(n)) out.set(n.name, ordinal ? `net${++index}` : hashedPodInterfaceName(n.name));
    else if (n.multus?.default === true && !out.has(n.name)) out.set(n.name, PRIMARY_POD_INTERFACE);
  }
  return out;
}

/**
 * Whether the VMI's pod uses ordinal names, judged from `status.interfaces` (KubeVirt's
 * `HasOrdinalSecondaryIfaces`): the first secondary network with a reported pod interface decides;
 * with secondary networks but none reported yet the answer is true (the conservative guess); with
 * no secondary network, false.
 */
export function hasOrdinalSecondaryIfaces(networks: readonly Network[], ifaceStatuses: readonly VirtualMachineInstanceNetworkInterface[]): boolean {
  const secondary = networks.filter(isSecondaryMultus);
  if (secondary.length === 0) return false;
  const byName = new Map(ifaceStatuses.map((s) => [s.name ?? '', s]));
  for (const n of secondary) {
    const podIface = byName.get(n.name)?.podInterfaceName;
    if (podIface) return ORDINAL.test(podIface);
  }
  return true;
}
