/**
 * Coalescing a key's messages keeps the newest cause and the freshest view (shared/queue/coalesce.ts):
 * a message that arrives late with an old view — sent again, duplicated — must not hide what a
 * fresher message already carried (a lost wake-up: the reconcile would act on the old cluster and
 * settle the key).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coalesceBodies, coalesceMessages } from '../../shared/queue/coalesce.ts';
import { groupReceived } from '../../shared/queue/sqs-grouping.ts';
import { checkView, fresherView, type MessageView } from '../../shared/relay/view.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import { keyMessage, withView } from './conformance.ts';

const view = (seq: number | undefined, relay = 'r1'): MessageView => ({ reads: [], ...(seq === undefined ? {} : { taken: { relay, seq } }) });

test('fresherView: the higher stamp of one relay; anything it cannot order gives no view', () => {
  const rows: [string, MessageView | undefined, MessageView | undefined, string][] = [
    ['newer is fresher', view(3), view(5), 'newer'],
    ['older is fresher (a late copy)', view(5), view(3), 'older'],
    ['same stamp', view(4), view(4), 'newer'],
    ['another relay', view(5, 'r1'), view(3, 'r2'), 'none'],
    ['an unstamped view', view(undefined), view(3), 'none'],
    ['the older has no view', undefined, view(3), 'none'],
    ['the newer has no view', view(3), undefined, 'none'],
  ];
  for (const [what, older, newer, want] of rows) {
    const got = fresherView(older, newer);
    assert.equal(got === undefined ? 'none' : got === older ? 'older' : 'newer', want, what);
  }
});

test('coalesceMessages keeps the newer cause with the fresher view; coalesceBodies leaves a standing body as it is', () => {
  // arrange
  const fresh = withView(keyMessage('ns/a', 2), 5);
  const late = withView(keyMessage('ns/a', 1, 'RELIST'), 3);
  // act
  const merged = coalesceMessages(fresh, late);
  const body = coalesceBodies(JSON.stringify(fresh), JSON.stringify(late));
  const plain = coalesceBodies(JSON.stringify(keyMessage('ns/a', 1)), JSON.stringify(keyMessage('ns/a', 2)));
  // assert
  assert.equal(merged.cause.event, 'RELIST');
  assert.equal(merged.view?.taken?.seq, 5);
  assert.deepEqual(JSON.parse(body), merged, 'the body form agrees');
  assert.equal(plain, JSON.stringify(keyMessage('ns/a', 2)), 'no views: the newer body, untouched');
  assert.equal(coalesceMessages(late, fresh), fresh, 'in order: the newer message as it is');
  assert.equal(coalesceMessages(withView(keyMessage('ns/a', 1), 5, 'r2'), fresh).view, undefined, 'two relays: no view');
});

test('an SQS receive holding a fresh message and a late copy delivers the fresh view', () => {
  // arrange
  const msgs = [withView(keyMessage('ns/a', 2), 5), withView(keyMessage('ns/a', 1, 'RELIST'), 3)];
  const batch = msgs.map((m, i) => ({ messageId: `${i}`, receiptHandle: `h${i}`, body: JSON.stringify(m), groupId: 'ns/a', receiveCount: 1, sentTimestamp: 1000 + i, firstReceiveTimestamp: 1000 + i }));
  // act
  const { keys } = groupReceived(batch);
  // assert
  assert.equal(keys.length, 1);
  assert.equal(keys[0]!.received.message.view?.taken?.seq, 5);
  assert.equal(keys[0]!.received.coalesced, 2);
});

test('the queue edge checks a view stamp', () => {
  assert.throws(() => checkView({ reads: [], taken: { relay: 'r', seq: 'x' } }), /taken must be/);
  assert.throws(() => checkView({ reads: [], taken: null }), /taken must be/);
  assert.doesNotThrow(() => checkView({ reads: [], taken: { relay: 'r', seq: 3 } }));
});

test('coalesceBodies agrees with coalesceMessages on every pairing, its fast path (stamps read from the bodies\' ends) included', () => {
  // arrange: views of one relay in and out of order, another relay, no view, an unstamped view,
  // and a view whose last object ends in a decoy stamp of its own
  const decoy = (seq: number): KeyMessage => {
    const m = withView(keyMessage('ns/a', seq), seq);
    return { ...m, view: { reads: [{ resource: 'pods', namespace: 'ns', items: [{ metadata: { name: 'p' }, spec: { taken: { relay: 'relay-1', seq: 99 } } }] }], taken: m.view!.taken! } };
  };
  const unstamped = (seq: number): KeyMessage => ({ ...keyMessage('ns/a', seq), view: { reads: [] } });
  const messages: [string, KeyMessage][] = [
    ['seq 3', withView(keyMessage('ns/a', 1), 3)],
    ['seq 5', withView(keyMessage('ns/a', 2), 5)],
    ['seq 5 again', withView(keyMessage('ns/a', 3, 'RELIST'), 5)],
    ['another relay', withView(keyMessage('ns/a', 4), 4, 'relay-2')],
    ['no view', keyMessage('ns/a', 5)],
    ['unstamped', unstamped(6)],
    ['decoy seq 2', decoy(2)],
    ['decoy seq 7', decoy(7)],
  ];
  for (const [a, older] of messages) {
    for (const [b, newer] of messages) {
      // act
      const body = coalesceBodies(JSON.stringify(older), JSON.stringify(newer));
      // assert
      assert.deepEqual(JSON.parse(body), JSON.parse(JSON.stringify(coalesceMessages(older, newer))), `${a} then ${b}`);
    }
  }
});
