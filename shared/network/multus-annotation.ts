/**
 * The Multus `k8s.v1.cni.cncf.io/networks` annotation (reference-vm-vmi-depth §6, KubeVirt's
 * `pkg/network/multus/annotation.go`): one NetworkSelectionElement per secondary Multus network,
 * `{name, namespace, mac?, interface}` in Multus' JSON key order. Used by the template service for
 * a new launcher pod and by the VMI controller when it rewrites a running pod's annotation for a
 * NIC hot-plug or unplug. Binding plugins' NADs are not rendered (the template does not support
 * binding plugins). Pure.
 */
import type { Interface, Network } from '../api/index.ts';

/** A NetworkSelectionElement in Multus' key order (name, namespace, mac, interface). */
export type SelectionElement = Record<string, string>;

/** The element for secondary network `net` of a VMI in `namespace`, on pod interface `podIface`. */
export function multusSelectionElement(namespace: string, ifaces: readonly Interface[], net: Network, podIface: string): SelectionElement {
  const networkName = net.multus?.networkName ?? '';
  // `<ns>/<nad>`, or the VMI's namespace when the name carries none.
  const [nadNs, nadName] = networkName.includes('/') ? (networkName.split('/', 2) as [string, string]) : [namespace, networkName];
  const mac = ifaces.find((f) => f.name === net.name)?.macAddress;
  return { name: nadName, namespace: nadNs, ...(mac ? { mac } : {}), interface: podIface };
}

/**
 * The annotation's value for `networks` (their secondary Multus ones, in order) named by
 * `scheme` (network name → pod interface), or undefined when there is none.
 */
export function multusNetworksAnnotation(namespace: string, ifaces: readonly Interface[], networks: readonly Network[], scheme: ReadonlyMap<string, string>): string | undefined {
  const elements = networks
    .filter((n) => n.multus !== undefined && n.multus.default !== true)
    .map((n) => multusSelectionElement(namespace, ifaces, n, scheme.get(n.name) ?? ''));
  return elements.length > 0 ? JSON.stringify(elements) : undefined;
}
