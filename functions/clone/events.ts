/** Events of the clone controller (component `clone-controller`), best effort (shared/reconcile/events.ts). */
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
import { recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import type { CloneDeps } from './deps.ts';
import { CLONE_API_VERSION, KIND_CLONE } from './names.ts';

/** Records an event on the clone; only `RestoreCreationFailed` is a Warning. */
export function cloneEvent(deps: CloneDeps, clone: VirtualMachineClone, reason: string, message: string): Promise<void> {
  const involvedObject = { apiVersion: CLONE_API_VERSION, kind: KIND_CLONE, namespace: clone.metadata?.namespace, name: clone.metadata?.name ?? '', uid: clone.metadata?.uid };
  return recordEvent(deps, involvedObject, reason === 'RestoreCreationFailed' ? 'Warning' : 'Normal', reason, message, EVENT_COMPONENT.clone);
}
