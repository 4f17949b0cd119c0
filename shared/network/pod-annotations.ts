/**
 * The annotations the VMI controller keeps up to date on a ready, running launcher pod
 * (reference-vm-vmi-depth §6 "On a ready, non-temp pod, every pass"; KubeVirt's
 * `GenerateFromActivePod` and `SyncPodAnnotations`), pure:
 * - `descheduler.alpha.kubernetes.io/request-evict-only: ""` (rendered on every launcher pod, so
 *   normally already there);
 * - `kubevirt.io/network-info` for the SR-IOV interfaces, and those whose binding plugin asks for
 *   `device-info`, that Multus reports (device info, MAC, MTU), which the launcher reads through
 *   the downward API;
 * - the Multus `k8s.v1.cni.cncf.io/networks` annotation regenerated when an interface must be
 *   hot-plugged (a non-`absent` interface missing from `status.interfaces`; an SR-IOV one not yet
 *   in status is left out of the annotation) or hot-unplugged (an `absent` one exists), named the
 *   way the pod names its interfaces (from its network status) — Multus' dynamic-networks
 *   controller then attaches or detaches the network on the running pod.
 * The network ones ({@link activePodNetworkAnnotations}) are also what the migration controller
 * writes on a ready migration target pod before the hand-off (functions/migration/reconcile.ts).
 * Only keys whose value differs are returned; the write is a JSON patch `add` per key. Then the
 * descheduler's `eviction-in-progress` annotation follows the VMI's evacuation mark
 * (`MarkEvictionInProgress` / `MarkEvictionCompleted`): added as "true" while
 * `status.evacuationNodeName` is set, removed (after a `test` of its value) once it is not.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Interface, VirtualMachineInstance } from '../api/index.ts';
import { EVICTION_IN_PROGRESS_ANNOTATION, MULTUS_NETWORKS_ANNOTATION, NETWORK_INFO_ANNOTATION, REQUEST_EVICT_ONLY_ANNOTATION } from '../api/well-known.ts';
import type { NetworkBindingPlugin } from '../config/cluster-config.ts';
import { escapeJsonPointer, type JsonPatchOperation } from '../kube/client.ts';
import { multusNetworksAnnotation } from './multus-annotation.ts';
import { nameSchemeFromStatuses } from './name-scheme.ts';
import { networkStatusesByPodInterface, networkStatusesFromPod } from './network-status.ts';
import { INTERFACE_STATE_ABSENT } from '../api/well-known.ts';

const ABSENT = INTERFACE_STATE_ABSENT;

/** The regenerated Multus annotation, or undefined when no interface is to be plugged or unplugged (or it is unchanged). */
export function multusAnnotationUpdate(vmi: VirtualMachineInstance, pod: V1Pod): string | undefined {
  const ifaces = vmi.spec.domain.devices.interfaces ?? [];
  const nonAbsent = ifaces.filter((i) => i.state !== ABSENT);
  const toUnplug = nonAbsent.length < ifaces.length;
  const inStatus = new Set((vmi.status?.interfaces ?? []).map((s) => s.name ?? ''));
  // An SR-IOV interface is annotated only once plugged (upstream migrates for it instead).
  const toAnnotate = nonAbsent.filter((i) => !(i.sriov !== undefined && !inStatus.has(i.name)));
  const toPlug = toAnnotate.some((i) => !inStatus.has(i.name));
  if (!toPlug && !toUnplug) return undefined;
  // In interface order, as upstream filters the networks by the interfaces.
  const byName = new Map((vmi.spec.networks ?? []).map((n) => [n.name, n]));
  const networks = toAnnotate.flatMap((i) => byName.get(i.name) ?? []);
  const scheme = nameSchemeFromStatuses(networks, networkStatusesFromPod(pod));
  const next = multusNetworksAnnotation(vmi.metadata?.namespace ?? '', toAnnotate, networks, scheme) ?? '';
  return next === (pod.metadata?.annotations?.[MULTUS_NETWORKS_ANNOTATION] ?? '') ? undefined : next;
}

/**
 * `kubevirt.io/network-info` for the SR-IOV interfaces and those whose binding plugin (in
 * `bindings`, the KubeVirt CR's `network.binding`) has `downwardAPI: device-info`, as Multus reports
 * them on `pod`; undefined when there is none (an interface not plugged yet is left out).
 */
export function networkInfoAnnotation(vmi: VirtualMachineInstance, pod: V1Pod, bindings: Readonly<Record<string, NetworkBindingPlugin>> = {}): string | undefined {
  const sriov: Interface[] = (vmi.spec.domain.devices.interfaces ?? []).filter((i) => i.sriov !== undefined || (i.binding !== undefined && bindings[i.binding.name]?.downwardAPI === 'device-info'));
  if (sriov.length === 0) return undefined;
  const statuses = networkStatusesFromPod(pod);
  const byPodIface = networkStatusesByPodInterface(statuses);
  const scheme = nameSchemeFromStatuses(vmi.spec.networks ?? [], statuses);
  const found = sriov
    .map((i) => ({ network: i.name, status: byPodIface.get(scheme.get(i.name) ?? '') }))
    .filter((e) => e.status !== undefined)
    .sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));
  if (found.length === 0) return undefined;
  // Key order and omitted empties as KubeVirt's downward-API types marshal them.
  const interfaces = found.map(({ network, status }) => ({
    network,
    ...(status!['device-info'] !== undefined ? { deviceInfo: status!['device-info'] } : {}),
    ...(status!.mac ? { mac: status!.mac } : {}),
    ...(status!.mtu ? { mtu: status!.mtu } : {}),
  }));
  return JSON.stringify({ interfaces });
}

/**
 * KubeVirt's `GenerateFromActivePod` with `SyncPodAnnotations`' filter: the network-info and the
 * regenerated Multus annotation for a live pod (the launcher, or a ready migration target),
 * only the keys whose value differs.
 */
export function activePodNetworkAnnotations(vmi: VirtualMachineInstance, pod: V1Pod, bindings: Readonly<Record<string, NetworkBindingPlugin>> = {}): Record<string, string> {
  const want: Record<string, string> = {};
  const info = networkInfoAnnotation(vmi, pod, bindings);
  if (info !== undefined) want[NETWORK_INFO_ANNOTATION] = info;
  const multus = multusAnnotationUpdate(vmi, pod);
  if (multus !== undefined) want[MULTUS_NETWORKS_ANNOTATION] = multus;
  return changedOnly(pod, want);
}

/** The annotations to write on the ready launcher pod: only keys whose value differs. */
export function activePodAnnotations(vmi: VirtualMachineInstance, pod: V1Pod, bindings: Readonly<Record<string, NetworkBindingPlugin>> = {}): Record<string, string> {
  return { ...changedOnly(pod, { [REQUEST_EVICT_ONLY_ANNOTATION]: '' }), ...activePodNetworkAnnotations(vmi, pod, bindings) };
}

function changedOnly(pod: V1Pod, want: Record<string, string>): Record<string, string> {
  const have = pod.metadata?.annotations ?? {};
  return Object.fromEntries(Object.entries(want).filter(([k, v]) => have[k] !== v));
}

/** The JSON patch for `changes`: an `add` per key (which replaces an existing value). */
export function podAnnotationOps(pod: V1Pod, changes: Record<string, string>): JsonPatchOperation[] {
  if (pod.metadata?.annotations === undefined) return [{ op: 'add', path: '/metadata/annotations', value: changes }];
  return Object.entries(changes).map(([k, v]) => ({ op: 'add' as const, path: `/metadata/annotations/${escapeJsonPointer(k)}`, value: v }));
}

/** The eviction-in-progress ops for the pod, given the VMI's evacuation mark (none when they agree). */
export function evictionInProgressOps(vmi: VirtualMachineInstance, pod: V1Pod, annotationsExist: boolean): JsonPatchOperation[] {
  const marked = Boolean(vmi.status?.evacuationNodeName);
  const value = pod.metadata?.annotations?.[EVICTION_IN_PROGRESS_ANNOTATION];
  const path = `/metadata/annotations/${escapeJsonPointer(EVICTION_IN_PROGRESS_ANNOTATION)}`;
  if (marked && value === undefined) return annotationsExist ? [{ op: 'add', path, value: 'true' }] : [{ op: 'add', path: '/metadata/annotations', value: { [EVICTION_IN_PROGRESS_ANNOTATION]: 'true' } }];
  if (!marked && value !== undefined) return [{ op: 'test', path, value }, { op: 'remove', path }];
  return [];
}
