import type { KeyMessage } from './message.ts';

/**
 * The message a timer (REQUEUE) or a replay (REPLAY) puts back on a queue: same key and object,
 * a new event and time, and no view — what the relay saw when it sent the key is stale by the
 * time a timer fires or an operator replays it; the receiver reads current state.
 */
export function recause(msg: KeyMessage, event: 'REQUEUE' | 'REPLAY', now: number): KeyMessage {
  const { view: _stale, ...rest } = msg;
  return { ...rest, cause: { ...msg.cause, event, seenAt: now } };
}
