/** Events about a pool (component `virtualmachinepool-controller`), best effort (shared/reconcile/events.ts). */
import { eventRecorder } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { KIND_POOL, POOL_API_VERSION } from './well-known.ts';

export const poolEvent = eventRecorder(POOL_API_VERSION, KIND_POOL, EVENT_COMPONENT.pool);
