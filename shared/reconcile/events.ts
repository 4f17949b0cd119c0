/**
 * Best-effort Events for the reconciles, as client-go's recorder treats them: a failed event is
 * logged and never fails the reconcile that emits it.
 */
import type { InvolvedObject, KubeClient } from '../kube/client.ts';
import type { ReconcileLogger } from '../metrics/log.ts';
import { KIND_VMI, KUBEVIRT_API_VERSION } from '../api/well-known.ts';

/** What an object needs to be an event's subject. */
interface Subject {
  metadata?: { name?: string | undefined; namespace?: string | undefined; uid?: string | undefined } | undefined;
}

/** The involved-object reference of a KubeVirt object of `kind` (default VirtualMachineInstance). */
export function kubevirtRef(obj: Subject, kind: string = KIND_VMI): InvolvedObject {
  return { apiVersion: KUBEVIRT_API_VERSION, kind, namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid };
}

/** The involved-object reference of a Node (cluster-scoped: its events go to `default`). */
export function nodeRef(node: Subject): InvolvedObject {
  return { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name ?? '', uid: node.metadata?.uid };
}

/** Records one Event; a failure is logged as a warning and swallowed. */
export async function recordEvent(
  deps: { readonly kube: Pick<KubeClient, 'createEvent'>; readonly log: ReconcileLogger },
  involvedObject: InvolvedObject,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): Promise<void> {
  try {
    await deps.kube.createEvent({ involvedObject, type, reason, message });
  } catch (err) {
    deps.log.warn('could not record event', { reason, error: errorText(err) });
  }
}

/** An error's message, for event texts and joined error reports. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
