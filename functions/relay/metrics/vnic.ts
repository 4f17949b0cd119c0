/**
 * The vNIC info series of a VM or VMI spec (KubeVirt's `kubevirt_vm_vnic_info` and
 * `kubevirt_vmi_vnic_info`): one per interface that names a network of the spec, labelled with
 * how it is bound (a core binding or a plugin) and which network it attaches to.
 */
import type { Interface, Network } from '../../../shared/api/index.ts';

/** `[vnic_name, binding_type, network, binding_name, model]`. */
export type VnicLabels = readonly [string, string, string, string, string];

/** The interface's binding as KubeVirt names it; both empty for a binding it does not list. */
function bindingOf(iface: Interface): readonly [string, string] {
  if (iface.masquerade) return ['core', 'masquerade'];
  if (iface.bridge) return ['core', 'bridge'];
  if (iface.sriov) return ['core', 'sriov'];
  if (iface.binding) return ['plugin', iface.binding.name ?? ''];
  return ['', ''];
}

/** The pod network, or the Multus network's name; undefined when no network has the interface's name. */
function networkOf(name: string, networks: readonly Network[]): string | undefined {
  const net = networks.find((n) => n.name === name);
  if (net?.pod) return 'pod networking';
  if (net?.multus) return net.multus.networkName;
  return undefined;
}

/** The label values of every interface that has a network (an interface without one is skipped, as KubeVirt does). */
export function vnicLabels(interfaces: readonly Interface[] | undefined, networks: readonly Network[] | undefined): VnicLabels[] {
  const out: VnicLabels[] = [];
  for (const iface of interfaces ?? []) {
    const network = networkOf(iface.name, networks ?? []);
    if (network === undefined) continue;
    const [bindingType, bindingName] = bindingOf(iface);
    out.push([iface.name, bindingType, network, bindingName, iface.model || '<none>']);
  }
  return out;
}
