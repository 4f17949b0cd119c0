/** Events of the snapshot controller (component `snapshot-controller`), best effort (shared/reconcile/events.ts). */
import { recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import type { SnapshotDeps } from './deps.ts';
import { SNAPSHOT_API_VERSION } from '../../shared/api/well-known.ts';
export { SNAPSHOT_API_VERSION };


interface Subject {
  metadata?: { name?: string | undefined; namespace?: string | undefined; uid?: string | undefined } | undefined;
}

/** Records an event on a VirtualMachineSnapshot or VirtualMachineSnapshotContent. */
export function snapshotEvent(deps: SnapshotDeps, kind: 'VirtualMachineSnapshot' | 'VirtualMachineSnapshotContent', obj: Subject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
  const involvedObject = { apiVersion: SNAPSHOT_API_VERSION, kind, namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid };
  return recordEvent(deps, involvedObject, type, reason, message, EVENT_COMPONENT.snapshot);
}

