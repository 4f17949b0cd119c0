/**
 * The sandbox playing Multus (issue 16): when a pod that asks for Multus networks
 * (`k8s.v1.cni.cncf.io/networks`, or a Multus default network) gets its sandbox, Multus records
 * what it attached in `k8s.v1.cni.cncf.io/network-status` — the cluster network on `eth0`
 * (`default: true`) and each requested attachment on the interface the request named, with a
 * MAC (the requested one, else a stable generated one) and, for the default, the pod IP. Pods that
 * ask for no Multus network are left alone (no extra write). Pure.
 */
import { createHash } from 'node:crypto';
import type { Pod } from './objects.ts';

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const NETWORK_STATUS_ANNOTATION = 'k8s.v1.cni.cncf.io/network-status';
const DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';

interface Selection {
  name?: string;
  namespace?: string;
  mac?: string;
  interface?: string;
}

function stableMac(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  return ['0a', ...[0, 1, 2, 3, 4].map((i) => h[i]!.toString(16).padStart(2, '0'))].join(':');
}

/** The network-status annotation value for `pod` at `podIP`, or undefined when it asks for no Multus network (or the request does not parse). */
export function multusNetworkStatus(pod: Pod, podIP: string): string | undefined {
  const annotations = pod.metadata?.annotations ?? {};
  const requested = annotations[NETWORKS_ANNOTATION];
  const defaultNetwork = annotations[DEFAULT_NETWORK_ANNOTATION];
  if (requested === undefined && defaultNetwork === undefined) return undefined;
  let selections: Selection[] = [];
  if (requested) {
    try {
      const parsed: unknown = JSON.parse(requested);
      if (!Array.isArray(parsed)) return undefined;
      selections = parsed as Selection[];
    } catch {
      // Multus refuses such a pod; the sandbox just reports nothing.
      return undefined;
    }
  }
  const uid = pod.metadata?.uid ?? '';
  const status: Record<string, unknown>[] = [
    { name: defaultNetwork ?? 'k8s-pod-network', interface: 'eth0', ips: [podIP], mac: stableMac(`${uid}/eth0`), default: true, dns: {} },
    ...selections.map((s, i) => {
      const iface = s.interface ?? `net${i + 1}`;
      return { name: `${s.namespace ?? pod.metadata?.namespace ?? ''}/${s.name ?? ''}`, interface: iface, mac: s.mac ?? stableMac(`${uid}/${iface}`), dns: {} };
    }),
  ];
  return JSON.stringify(status);
}
