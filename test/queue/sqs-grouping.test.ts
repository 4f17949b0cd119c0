/**
 * SQS coalescing is the grouping of one receive's messages by message group. fauxqs returns only
 * the head of each group per receive (real SQS returns several), so this logic is fed a receive
 * result directly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeReceipt, groupReceived, type SqsReceived } from '../../shared/queue/sqs-grouping.ts';
import { keyMessage } from './conformance.ts';

function received(id: string, group: string, body: string, receiveCount = 1, sent = 1000): SqsReceived {
  return { messageId: id, receiptHandle: `h-${id}`, body, groupId: group, receiveCount, sentTimestamp: sent, firstReceiveTimestamp: sent + 1 };
}

describe('groupReceived (coalescing within one SQS receive)', () => {
  test('messages of one group become one key: newest cause, all receipts, highest receive count, oldest sent time', () => {
    // arrange: a retried head (count 3) of ns/a, then two newer events, and a malformed one in between
    const batch = [
      received('1', 'ns/a', JSON.stringify(keyMessage('ns/a', 1)), 3, 500),
      received('2', 'ns/b', JSON.stringify(keyMessage('ns/b', 1))),
      received('3', 'ns/a', '{oops'),
      received('4', 'ns/a', JSON.stringify(keyMessage('ns/a', 2)), 1, 900),
    ];
    // act
    const { keys, malformed } = groupReceived(batch);
    // assert
    assert.deepEqual(keys.map((k) => [k.received.message.key, k.received.message.cause.resourceVersion, k.received.coalesced]), [
      ['ns/a', '2', 2],
      ['ns/b', '1', 1],
    ]);
    const a = keys[0]!;
    assert.deepEqual(a.messageIds, ['1', '4'], 'a failure of ns/a must fail exactly its own records');
    assert.equal(a.received.attempt, 3, 'the retried head decides the attempt');
    assert.equal(a.received.enqueuedAt, 500);
    assert.deepEqual(decodeReceipt(a.received.receipt).h, ['h-1', 'h-4'], 'settling must cover every message behind the key');
    assert.deepEqual(malformed.map((m) => [m.messageId, decodeReceipt(m.receipt).b]), [['3', '{oops']]);
  });

  test('an empty receive gives nothing', () => {
    assert.deepEqual(groupReceived([]), { keys: [], malformed: [] });
  });
});
