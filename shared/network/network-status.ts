/**
 * The launcher pod's `k8s.v1.cni.cncf.io/network-status` annotation, as Multus writes it
 * (reference-vm-vmi-depth §6): a JSON list with one entry per attached network. Read by the VMI
 * controller for `status.interfaces`, the Multus annotation refresh, `kubevirt.io/network-info`
 * and the network migration evaluator. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';

export const NETWORK_STATUS_ANNOTATION = 'k8s.v1.cni.cncf.io/network-status';

/** One element of the network-status annotation (the fields the controllers read). */
export interface NetworkStatusEntry {
  /** `<namespace>/<nad>` of a secondary network, the cluster network's name for the default. */
  readonly name?: string;
  /** The pod interface (`eth0`, `pod<hash>`, `net<N>`). */
  readonly interface?: string;
  readonly mac?: string;
  readonly mtu?: number;
  readonly default?: boolean;
  readonly 'device-info'?: unknown;
}

/** The entries of `pod`'s network status; an annotation that does not parse counts as empty (KubeVirt only logs it). */
export function networkStatusesFromPod(pod: V1Pod | undefined): NetworkStatusEntry[] {
  const raw = pod?.metadata?.annotations?.[NETWORK_STATUS_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? (parsed.filter((e) => typeof e === 'object' && e !== null) as NetworkStatusEntry[]) : [];
  } catch {
    return [];
  }
}

/** The entries by pod interface name (a later entry for the same interface wins, as upstream's map does). */
export function networkStatusesByPodInterface(entries: readonly NetworkStatusEntry[]): Map<string, NetworkStatusEntry> {
  return new Map(entries.map((e) => [e.interface ?? '', e]));
}
