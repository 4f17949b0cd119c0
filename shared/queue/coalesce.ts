/**
 * Coalescing two messages of one key into the one delivery that reconciles them both: the newer
 * message's cause (what the key was last woken for) with the fresher of the two views
 * (shared/relay/view.ts `fresherView`). Both queues coalesce with it: the embedded queue when a
 * message joins a key's waiting row, the SQS side when one receive holds several of a key's
 * messages.
 */
import { fresherView } from '../relay/view.ts';
import type { KeyMessage } from './message.ts';

/** `newer` as it should be delivered after `older` was coalesced into it. */
export function coalesceMessages(older: KeyMessage, newer: KeyMessage): KeyMessage {
  const view = fresherView(older.view, newer.view);
  if (view === newer.view) return newer;
  const { view: _newerView, ...rest } = newer;
  return view === undefined ? rest : { ...rest, view };
}

/**
 * The same on message bodies (JSON), for a queue that stores them: `newerBody` itself when it
 * stands as it is, and as it is too when either body does not parse. Both bodies were checked
 * when they were sent (a malformed body never joins a key's row), so they are only parsed here,
 * not checked again: this runs inside the queue's write transaction, for every coalesced message.
 */
export function coalesceBodies(olderBody: string, newerBody: string): string {
  // Neither carries a view: nothing to choose (no parse on the common path of view-less controllers).
  if (!olderBody.includes('"view"') && !newerBody.includes('"view"')) return newerBody;
  // The common path of viewed controllers: the relay's next message, its view taken later than the
  // waiting one's — read from the bodies' ends, not parsed (each is tens of KB).
  const [o, n] = [stampAtEnd(olderBody), stampAtEnd(newerBody)];
  if (o !== undefined && n !== undefined && o.relay === n.relay && n.seq >= o.seq) return newerBody;
  let older: KeyMessage;
  let newer: KeyMessage;
  try {
    older = JSON.parse(olderBody) as KeyMessage;
    newer = JSON.parse(newerBody) as KeyMessage;
  } catch {
    return newerBody;
  }
  const merged = coalesceMessages(older, newer);
  return merged === newer ? newerBody : JSON.stringify(merged);
}

/**
 * A view's stamp as a body written by the relay ends with it: `…,"view":{"reads":[…],"taken":{"relay":"…","seq":N}}}`
 * (functions/relay/relay.ts puts the view last in the message, `taken` last in the view). In JSON
 * only a member that closes two objects at the very end can end a body so, and a message's only
 * object member that ends in an object is its view. Undefined when the body does not end so (no
 * view, another writer's field order): the caller parses.
 */
const STAMP_AT_END = /,"taken":\{"relay":"([A-Za-z0-9_-]*)","seq":(\d{1,15})\}\}\}$/;

function stampAtEnd(body: string): { relay: string; seq: number } | undefined {
  const m = STAMP_AT_END.exec(body.slice(-200));
  return m ? { relay: m[1]!, seq: Number(m[2]) } : undefined;
}
