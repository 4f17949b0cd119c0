/**
 * The kubelet's admission of a pod bound to its node, as a pure function (Kubernetes
 * `pkg/kubelet/cm/devicemanager/manager.go` `devicesToAllocate`; `pkg/kubelet/lifecycle/
 * predicate.go` `GeneralPredicates` with `removeMissingExtendedResources`; `kubelet.go`
 * `rejectPod`). It matters for a pod that reached the node without the scheduler's fit check (bound
 * by `spec.nodeName`), or one the scheduler placed on a stale view.
 *
 * - Device manager first: a device-plugin resource the node has registered (present in its
 *   capacity) with fewer free devices (allocatable minus what admitted pods hold) than the pod
 *   asks for → `UnexpectedAdmissionError`. A resource no plugin registered is skipped.
 * - Then the fit predicate, after dropping extended resources the node does not know at all:
 *   cpu, memory, pods, hugepages, ephemeral storage and known extended resources over what is
 *   left → `OutOf<resource>` (the full name: `OutOfcpu`, `OutOfdevices.kubevirt.io/kvm`).
 *
 * A rejected pod is `Failed` with that reason and "Pod was rejected: <message>".
 */
import { cachedAmounts, cachedRequests } from './placement.ts';
import type { Node, Pod } from './objects.ts';

export interface Rejection {
  reason: string;
  message: string;
}

type Amounts = Map<string, number>;

/** A resource served by a device plugin: a domain-qualified name outside kubernetes.io. */
export function isDeviceResource(name: string): boolean {
  return name.includes('/') && !name.startsWith('kubernetes.io/') && !name.includes('.kubernetes.io/');
}

/** An extended resource (not cpu, memory, pods, ephemeral-storage, hugepages-*). */
function isExtended(name: string): boolean {
  return name.includes('/') && !name.startsWith('kubernetes.io/');
}

/** Why the kubelet on `node` rejects `pod`, given the pods it admitted before; undefined = admitted. */
export function admissionRejection(pod: Pod, node: Node, admitted: readonly Pod[]): Rejection | undefined {
  const want = cachedRequests(pod);
  const used: Amounts = new Map();
  for (const p of admitted) for (const [r, v] of cachedRequests(p)) used.set(r, (used.get(r) ?? 0) + v);
  const capacity = cachedAmounts(node.status?.capacity);
  const allocatable = cachedAmounts(node.status?.allocatable ?? node.status?.capacity);

  for (const [r, n] of want) {
    if (!isDeviceResource(r) || n <= 0 || !capacity.has(r)) continue;
    const available = Math.max(0, (allocatable.get(r) ?? 0) - (used.get(r) ?? 0));
    if (n > available) {
      return { reason: 'UnexpectedAdmissionError', message: `Allocate failed due to requested number of devices unavailable for ${r}. Requested: ${n}, Available: ${available}, which is unexpected` };
    }
  }
  if (admitted.length + 1 > (allocatable.get('pods') ?? Infinity)) {
    return { reason: 'OutOfpods', message: `Node didn't have enough resource: pods, requested: 1, used: ${admitted.length}, capacity: ${allocatable.get('pods') ?? 0}` };
  }
  for (const [r, n] of want) {
    if (n <= 0) continue;
    // removeMissingExtendedResources: an extended resource the node does not know is not checked.
    if (isExtended(r) && !allocatable.has(r)) continue;
    const cap = allocatable.get(r) ?? 0;
    const u = used.get(r) ?? 0;
    if (u + n > cap) return { reason: `OutOf${r}`, message: `Node didn't have enough resource: ${r}, requested: ${n}, used: ${u}, capacity: ${cap}` };
  }
  return undefined;
}
