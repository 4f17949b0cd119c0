/**
 * When the pods listed together with the VMI read (reconcile.ts, a VMI event's UID known up
 * front) can stand in for the list made after it.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import type { ListResult } from '../../shared/kube/client.ts';
import { isAtLeastRevision } from '../../shared/kube/resource-version.ts';

/**
 * An early pod list stands in for the one `observe` would make after the VMI read only if it is
 * of the VMI read (same UID) and at least as new (its resourceVersion ≥ the VMI's): then every
 * pod the VMI's state can know of is in it, as in a list made afterwards. Otherwise undefined.
 */
export function earlyPodList(list: ListResult<V1Pod>, hintedUid: string | undefined, vmi: VirtualMachineInstance): ListResult<V1Pod> | undefined {
  if (!hintedUid || vmi.metadata?.uid !== hintedUid) return undefined;
  return isAtLeastRevision(list.resourceVersion, vmi.metadata?.resourceVersion) ? list : undefined;
}
