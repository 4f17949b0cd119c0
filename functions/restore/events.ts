/** Events of the restore controller (component `restore-controller`), best effort (shared/reconcile/events.ts). */
import type { VirtualMachineRestore } from '../../shared/api/snapshot.ts';
import { SNAPSHOT_API_VERSION } from '../../shared/api/well-known.ts';
import { recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import type { RestoreDeps } from './deps.ts';

export function restoreEvent(deps: RestoreDeps, r: VirtualMachineRestore, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
  const involvedObject = { apiVersion: SNAPSHOT_API_VERSION, kind: 'VirtualMachineRestore', namespace: r.metadata?.namespace, name: r.metadata?.name ?? '', uid: r.metadata?.uid };
  return recordEvent(deps, involvedObject, type, reason, message, EVENT_COMPONENT.restore);
}
