/**
 * Which VMI a launcher, target or attachment pod belongs to, as the relay's mappers follow it
 * (KubeVirt's pod handlers resolve the same chain): the pod's VirtualMachineInstance controller
 * reference; for an attachment pod, whose controller is the launcher pod, that pod's VMI (so the
 * launcher pod's UID is remembered); for an orphan, the owner annotation that still names the VMI.
 */
import { KIND_VMI, OWNER_VMI_NAME_ANNOTATION } from '../api/well-known.ts';
import { controllerRefName, type WatchedObject } from './route.ts';

export class PodOwners {
  /** pod uid → owning VMI key. */
  readonly #owner = new Map<string, string>();

  /** The VMI key of `pod` (undefined when none can be told); remembers or forgets its UID. */
  observe(pod: WatchedObject, deleted: boolean): string | undefined {
    const ns = pod.metadata?.namespace ?? '';
    const uid = pod.metadata?.uid ?? '';
    let vmiKey: string | undefined;
    const vmi = controllerRefName(pod, KIND_VMI);
    if (vmi) vmiKey = `${ns}/${vmi}`;
    else {
      // An attachment pod's controller is the launcher pod: follow it to the VMI.
      const podRef = pod.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'Pod');
      if (podRef?.uid) vmiKey = this.#owner.get(podRef.uid);
      // Orphaned (owner reference removed): the owner annotations still name the VMI.
      const annotated = pod.metadata?.annotations?.[OWNER_VMI_NAME_ANNOTATION];
      if (!vmiKey && annotated) vmiKey = `${ns}/${annotated}`;
    }
    if (deleted) this.#owner.delete(uid);
    else if (vmiKey && uid) this.#owner.set(uid, vmiKey);
    return vmiKey;
  }

  /** Pods remembered. */
  get size(): number {
    return this.#owner.size;
  }
}
