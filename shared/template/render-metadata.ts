/**
 * Launcher pod metadata (reference §b.1): labels, annotations (domain, Multus networks, Istio,
 * Velero backup hooks, memory overhead) and the controller reference to the VMI.
 */
import { createHash } from 'node:crypto';
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import {
  APP_LABEL, CREATED_BY_LABEL, DEFAULT_CONTAINER_ANNOTATION, DOMAIN_ANNOTATION, ISTIO_INJECT_ANNOTATION,
  ISTIO_KUBEVIRT_INTERFACES_ANNOTATION, ISTIO_REROUTE_ANNOTATION, KIND_VMI, KUBEVIRT_API_VERSION, LAUNCHER_APP,
  LATEST_OBSERVED_API_VERSION_ANNOTATION, MEMORY_OVERHEAD_BYTES_ANNOTATION, MIGRATION_TRANSPORT_UNIX_ANNOTATION,
  MULTUS_DEFAULT_NETWORK_ANNOTATION, MULTUS_NETWORKS_ANNOTATION, REQUEST_EVICT_ONLY_ANNOTATION, SKIP_BACKUP_HOOKS_ANNOTATION,
  STORAGE_OBSERVED_API_VERSION_ANNOTATION, VELERO_POST_HOOK_COMMAND, VELERO_POST_HOOK_CONTAINER, VELERO_PRE_HOOK_COMMAND,
  VELERO_PRE_HOOK_CONTAINER, VELERO_PRE_HOOK_TIMEOUT, VM_NAME_LABEL, VMI_ID_LABEL,
} from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { multusSelectionElement } from '../network/multus-annotation.ts';
import type { NetworkBindingPlugin } from '../config/cluster-config.ts';
import { vmiName, vmiNamespace, vmiUid } from './vmi-traits.ts';

/** The pod hostname: `spec.hostname`, else the VMI name up to its first `.`, at most 63 characters. */
export function podHostname(vmi: VirtualMachineInstance): string {
  if (vmi.spec.hostname) return vmi.spec.hostname;
  const name = vmiName(vmi);
  const cut = name.includes('.') ? name.slice(0, name.indexOf('.')) : name;
  return cut.slice(0, 63);
}

/** `vmi.kubevirt.io/id`: the name when it fits a label value, else 54 chars + '-' + 8 hex of SHA-1. */
export function vmiIdLabelValue(name: string): string {
  if (name.length <= 63) return name;
  return `${name.slice(0, 54)}-${createHash('sha1').update(name).digest('hex').slice(0, 8)}`;
}

/** Launcher pod labels: the VMI's labels overridden by KubeVirt's own. */
export function podLabels(vmi: VirtualMachineInstance): Record<string, string> {
  const labels: Record<string, string> = { ...(vmi.metadata?.labels ?? {}) };
  labels[APP_LABEL] = LAUNCHER_APP;
  labels[CREATED_BY_LABEL] = vmiUid(vmi);
  labels[VM_NAME_LABEL] = podHostname(vmi);
  labels[VMI_ID_LABEL] = vmiIdLabelValue(vmiName(vmi));
  const istio = vmi.metadata?.annotations?.[ISTIO_INJECT_ANNOTATION];
  if (istio !== undefined) labels[ISTIO_INJECT_ANNOTATION] = istio;
  return labels;
}

/** `pod` + 11 hex chars of SHA-256(network name): the pod interface of a secondary network. */
export function hashedPodInterfaceName(networkName: string): string {
  return `pod${createHash('sha256').update(networkName).digest('hex').slice(0, 11)}`;
}

/**
 * Multus annotations (`k8s.v1.cni.cncf.io/networks`, `v1.multus-cni.io/default-network`) for the
 * VMI's Multus networks, and after each network whose interface uses a network binding plugin
 * with a NAD, that NAD with the network's name as a CNI argument. `ordinal` names interfaces
 * `net1, net2…` (old pods, migration targets).
 */
export function networkAnnotations(vmi: VirtualMachineInstance, ordinal = false, bindings: Readonly<Record<string, NetworkBindingPlugin>> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const ns = vmiNamespace(vmi);
  const ifaces = vmi.spec.domain.devices.interfaces ?? [];
  const elements: Record<string, unknown>[] = [];
  const pluginElement = (netName: string) => {
    const nad = bindings[ifaces.find((f) => f.name === netName)?.binding?.name ?? '']?.networkAttachmentDefinition;
    if (!nad) return;
    const [nadNs, nadName] = nad.includes('/') ? nad.split('/', 2) as [string, string] : [ns, nad];
    elements.push({ name: nadName, namespace: nadNs, 'cni-args': { logicNetworkName: netName } });
  };
  let ordinalIndex = 0;
  for (const [i, net] of (vmi.spec.networks ?? []).entries()) {
    if (!net.multus) {
      pluginElement(net.name);
      continue;
    }
    if (!net.multus.networkName) throw new InvalidInputError(`spec.networks[${i}].multus.networkName`, 'is required');
    if (net.multus.default) {
      out[MULTUS_DEFAULT_NETWORK_ANNOTATION] = net.multus.networkName;
      pluginElement(net.name);
      continue;
    }
    ordinalIndex++;
    const iface = ifaces.find((f) => f.name === net.name);
    if (iface?.state === 'absent') continue;
    elements.push(multusSelectionElement(ns, ifaces, net, ordinal ? `net${ordinalIndex}` : hashedPodInterfaceName(net.name)));
    pluginElement(net.name);
  }
  if (elements.length > 0) out[MULTUS_NETWORKS_ANNOTATION] = JSON.stringify(elements);
  if (ifaces.some((f) => f.masquerade !== undefined)) {
    out[ISTIO_KUBEVIRT_INTERFACES_ANNOTATION] = 'k6t-eth0';
    out[ISTIO_REROUTE_ANNOTATION] = 'k6t-eth0';
  }
  return out;
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'true'].includes(v.toLowerCase());
}

/** Velero pre/post backup hooks that freeze and thaw the guest file systems. */
export function backupHookAnnotations(vmi: VirtualMachineInstance): Record<string, string> {
  if (truthy(vmi.metadata?.annotations?.[SKIP_BACKUP_HOOKS_ANNOTATION])) return {};
  const name = vmiName(vmi);
  const ns = vmiNamespace(vmi);
  // KubeVirt formats the list itself (`", "` between quoted items), not as compact JSON.
  const cmd = (op: string) => `[${['/usr/bin/virt-freezer', op, '--name', name, '--namespace', ns].map((s) => JSON.stringify(s)).join(', ')}]`;
  return {
    [VELERO_PRE_HOOK_CONTAINER]: 'compute',
    [VELERO_PRE_HOOK_COMMAND]: cmd('--freeze'),
    [VELERO_PRE_HOOK_TIMEOUT]: '60s',
    [VELERO_POST_HOOK_CONTAINER]: 'compute',
    [VELERO_POST_HOOK_COMMAND]: cmd('--unfreeze'),
  };
}

/** All launcher pod annotations, in KubeVirt's precedence (later wins). */
export function podAnnotations(vmi: VirtualMachineInstance, overheadBytes: bigint, opts: { ordinalInterfaces?: boolean; bindings?: Readonly<Record<string, NetworkBindingPlugin>> } = {}): Record<string, string> {
  const out: Record<string, string> = { [DOMAIN_ANNOTATION]: vmiName(vmi) };
  for (const [k, v] of Object.entries(vmi.metadata?.annotations ?? {})) {
    if (k.startsWith('kubectl.kubernetes.io') || k === STORAGE_OBSERVED_API_VERSION_ANNOTATION || k === LATEST_OBSERVED_API_VERSION_ANNOTATION) continue;
    out[k] = v;
  }
  out[DEFAULT_CONTAINER_ANNOTATION] = 'compute';
  out[MIGRATION_TRANSPORT_UNIX_ANNOTATION] = 'true';
  out[REQUEST_EVICT_ONLY_ANNOTATION] = '';
  Object.assign(out, networkAnnotations(vmi, opts.ordinalInterfaces, opts.bindings), backupHookAnnotations(vmi));
  out[MEMORY_OVERHEAD_BYTES_ANNOTATION] = overheadBytes.toString();
  return out;
}

/** The single controller reference from a launcher pod to its VMI. */
export function vmiControllerRef(vmi: VirtualMachineInstance): V1OwnerReference {
  return {
    apiVersion: KUBEVIRT_API_VERSION,
    kind: KIND_VMI,
    name: vmiName(vmi),
    uid: vmiUid(vmi),
    controller: true,
    blockOwnerDeletion: true,
  };
}
