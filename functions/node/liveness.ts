/**
 * Is virt-handler on a node alive? (reference node-drain-updates §1.2 step 2). Only virt-handler's
 * heartbeat counts, never the Node's Ready condition: a node virt-handler never touched is
 * responsive, a deleted node is unresponsive at once, and otherwise the heartbeat must be no
 * older than five minutes.
 */
import type { V1Node } from '@kubernetes/client-node';
import { HEARTBEAT_ANNOTATION } from '../../shared/api/well-known.ts';
export { HEARTBEAT_ANNOTATION };

/** `heartBeatTimeout`. */
export const HEARTBEAT_TIMEOUT_MS = 5 * 60_000;
/** `recheckInterval`: every existing node is looked at again once a minute, for ever. */
export const RECHECK_INTERVAL_SECONDS = 60;

export type Liveness =
  | { state: 'responsive' }
  | { state: 'unresponsive' }
  /** The heartbeat does not parse: KubeVirt logs it and neither acts nor requeues. */
  | { state: 'unknown'; heartbeat: string };

/** `metav1.Time` as JSON: RFC 3339 with a time zone (an empty string does not parse). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function nodeLiveness(node: V1Node | undefined, nowMs: number): Liveness {
  if (!node) return { state: 'unresponsive' };
  const heartbeat = node.metadata?.annotations?.[HEARTBEAT_ANNOTATION];
  if (heartbeat === undefined) return { state: 'responsive' };
  const at = RFC3339.test(heartbeat) ? Date.parse(heartbeat) : NaN;
  if (Number.isNaN(at)) return { state: 'unknown', heartbeat };
  return at < nowMs - HEARTBEAT_TIMEOUT_MS ? { state: 'unresponsive' } : { state: 'responsive' };
}
