import type { KeyMessage } from './message.ts';

/**
 * The message a timer (REQUEUE) or a replay (REPLAY) puts back on a queue: same key and object,
 * a new event and time. The receiver re-reads current state, so nothing else needs to change.
 */
export function recause(msg: KeyMessage, event: 'REQUEUE' | 'REPLAY', now: number): KeyMessage {
  return { ...msg, cause: { ...msg.cause, event, seenAt: now } };
}
