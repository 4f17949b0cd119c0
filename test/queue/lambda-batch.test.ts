/**
 * The Lambda batch handler against real SQS semantics (fauxqs): an event is built from real
 * receives, plus hand-made records where fauxqs cannot produce them (it returns one message per
 * group per receive; a Lambda trigger may hand several).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChangeMessageVisibilityCommand, GetQueueUrlCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { InvalidInputError, TransientError } from '../../shared/errors.ts';
import { batchConcurrencyFromEnv } from '../../shared/queue/batch-concurrency.ts';
import { MIN_RESERVE_MS, processKeyBatch, reserveMs } from '../../shared/queue/lambda-batch.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { done, requeueAfter, terminal, type Outcome } from '../../shared/reconcile/outcome.ts';
import { keyMessage } from './conformance.ts';
import { startLocalSqs, type LocalSqs } from './fauxqs.ts';
import { sqsRecord } from '../support/sqs-event.ts';

let sqs: LocalSqs;
before(async () => {
  sqs = await startLocalSqs();
});
after(() => sqs.stop());

function record(m: Message): SQSRecord {
  return sqsRecord(m, 'lb-vmi.fifo');
}

/** A record fauxqs would not hand out in the same receive: a later message of an existing group. */
function extra(id: string, key: string, rv: number): SQSRecord {
  const sent = String(Date.now());
  return {
    ...record({ MessageId: id, ReceiptHandle: `not-a-real-handle-${id}`, Body: JSON.stringify(keyMessage(key, rv)) }),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: sent, SenderId: 'x', ApproximateFirstReceiveTimestamp: sent, MessageGroupId: key },
  };
}

describe('processKeyBatch (SQS FIFO event → per-key reconcile → partial batch response)', () => {
  test('a failing key fails only its own records; malformed, terminal, permanent and exhausted keys are dead-lettered', async () => {
    // arrange
    const client = sqs.client();
    const queue = new SqsKeyQueue({ client, prefix: 'lb', retry: { baseDelayMs: 1000, maxDelayMs: 2000, maxAttempts: 2, deadLetterAfterMs: 0 } });
    // deadLetterAfterMs 0: no window, so ns/f's second transient failure dead-letters it at once (the count alone).
    await queue.ensureQueues(['vmi']);
    await queue.send(['ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e', 'ns/f'].map((k) => keyMessage(k, 1)));
    await queue.sendRaw('vmi', 'not json at all', 'garbage-group');
    const queueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: 'lb-vmi.fifo' }))).QueueUrl;
    const receive = async (): Promise<Message[]> =>
      (await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }))).Messages ?? [];
    let msgs = await receive();
    // ns/f was tried before: make it visible again and receive it a second time (receive count 2)
    const f = msgs.find((m) => m.Body?.includes('"ns/f"'));
    assert.ok(f, 'fauxqs must hand out ns/f');
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: f.ReceiptHandle, VisibilityTimeout: 0 }));
    msgs = [...msgs.filter((m) => m !== f), ...(await receive())];
    assert.equal(msgs.length, 7, 'six keys and one malformed message');
    const idOf = (key: string): string => msgs.find((m) => m.Body?.includes(`"${key}"`))?.MessageId ?? '?';
    const event: SQSEvent = { Records: [...msgs.map(record), extra('a2', 'ns/a', 2), extra('b2', 'ns/b', 2)] };
    const seen: ReceivedKey[] = [];
    const outcomes: Record<string, () => Outcome> = {
      'ns/a': () => done,
      'ns/b': () => {
        throw new TransientError('ApiUnavailable', '503');
      },
      'ns/c': () => requeueAfter(30, 'waiting for the pod'),
      'ns/d': () => terminal('FailedCreate', 'rejected'),
      'ns/e': () => {
        throw new InvalidInputError('spec.domain', 'bad');
      },
      'ns/f': () => {
        throw new TransientError('ApiUnavailable', 'still 503');
      },
    };
    // act
    const res = await processKeyBatch(event, {
      controller: 'vmi',
      queue,
      reconcile: async (rk) => {
        seen.push(rk);
        return outcomes[rk.message.key]!();
      },
    });
    // assert
    assert.deepEqual(res.batchItemFailures.map((f) => f.itemIdentifier).sort(), [idOf('ns/b'), 'b2'].sort(),
      'only the failing key, with every record of its group');
    assert.deepEqual(seen.map((rk) => rk.message.key).sort(), ['ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e', 'ns/f'], 'one reconcile per key');
    const a = seen.find((rk) => rk.message.key === 'ns/a');
    assert.deepEqual([a?.coalesced, a?.message.cause.resourceVersion], [2, '2'], 'records of one key coalesce, newest wins');
    const dead = await queue.listDeadLetters({ controller: 'vmi' });
    assert.deepEqual(dead.map((d) => `${d.key}:${d.reason}`).sort(), [':MalformedMessage', 'ns/d:FailedCreate', 'ns/e:InvalidInput', 'ns/f:ApiUnavailable']);
    assert.equal((await queue.depth('vmi')).delayed, 1, 'the requeue-after timer must be scheduled');
  });

  test('maxInFlight bounds the keys reconciled at once; unset, every key of the batch runs at once', async () => {
    // arrange
    const client = sqs.client();
    const queue = new SqsKeyQueue({ client, prefix: 'lbc' });
    await queue.ensureQueues(['vmi']);
    const event: SQSEvent = { Records: ['ns/1', 'ns/2', 'ns/3', 'ns/4', 'ns/5'].map((k, i) => extra(`c${i}`, k, 1)) };
    const peakOf = async (maxInFlight?: number) => {
      let now = 0;
      let peak = 0;
      const keys: string[] = [];
      // Done keys are deleted by the trigger, not acked here: the hand-made receipts are never used.
      const res = await processKeyBatch(event, {
        controller: 'vmi',
        queue,
        ...(maxInFlight !== undefined ? { maxInFlight } : {}),
        reconcile: async (rk) => {
          peak = Math.max(peak, ++now);
          await new Promise((r) => setImmediate(r));
          keys.push(rk.message.key);
          now--;
          return done;
        },
      });
      assert.deepEqual(res.batchItemFailures, []);
      return { peak, keys };
    };
    // act
    const one = await peakOf(1);
    const two = await peakOf(2);
    const all = await peakOf();
    // assert
    assert.deepEqual([one.peak, two.peak, all.peak], [1, 2, 5]);
    assert.deepEqual(one.keys, ['ns/1', 'ns/2', 'ns/3', 'ns/4', 'ns/5'], 'one at a time, in the batch order');
    assert.equal(all.keys.length, 5, 'every key reconciled once');
  });

  test('a batch out of time starts no more keys: the rest are handed back, visible again at once, and reported failed', async () => {
    // arrange: five keys, one at a time, each reconcile using 6 s of a 20 s invocation
    const client = sqs.client();
    const queue = new SqsKeyQueue({ client, prefix: 'lbt' });
    await queue.ensureQueues(['vmi']);
    await queue.send(['ns/1', 'ns/2', 'ns/3', 'ns/4', 'ns/5'].map((k) => keyMessage(k, 1)));
    const queueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: 'lbt-vmi.fifo' }))).QueueUrl;
    const receive = async (): Promise<Message[]> =>
      (await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }))).Messages ?? [];
    const msgs = await receive();
    assert.equal(msgs.length, 5);
    const event: SQSEvent = { Records: msgs.map((m) => sqsRecord(m, 'lbt-vmi.fifo')) };
    let remaining = 20_000;
    const reconciled: string[] = [];
    const settled: { key: string; result: string; reason?: string }[] = [];
    // act
    const res = await processKeyBatch(event, {
      controller: 'vmi',
      queue,
      maxInFlight: 1,
      remainingMs: () => remaining,
      onSettled: (e) => settled.push(e),
      reconcile: async (rk) => {
        reconciled.push(rk.message.key);
        remaining -= 6_000;
        return done;
      },
    });
    // assert: 20 → 14 → 8 s left start keys; at 2 s (under the 5 s reserve) the last two go back
    const order = msgs.map((m) => (JSON.parse(m.Body ?? '{}') as { key: string }).key);
    assert.deepEqual(reconciled, order.slice(0, 3));
    const idsOf = (keys: string[]) => msgs.filter((m) => keys.includes((JSON.parse(m.Body ?? '{}') as { key: string }).key)).map((m) => m.MessageId).sort();
    assert.deepEqual(res.batchItemFailures.map((f) => f.itemIdentifier).sort(), idsOf(order.slice(3)));
    assert.deepEqual(settled.filter((e) => e.reason === 'NoTimeLeft').map((e) => e.key), order.slice(3));
    const again = (await receive()).map((m) => (JSON.parse(m.Body ?? '{}') as { key: string }).key).sort();
    assert.deepEqual(again, order.slice(3).sort(), 'the handed-back keys are visible at once; the reconciled ones stay with this invocation');
  });

  test('a key whose invocations keep being killed is dead-lettered LeaseExpired unreconciled, once past maxAttempts and the window', async () => {
    // arrange: both keys were received 20 times (the invocations died: our code saw no failure);
    // ns/g's first receive was two hours ago, ns/h's a minute ago
    const queue = new SqsKeyQueue({ client: sqs.client(), prefix: 'lbk', retry: { baseDelayMs: 1000, maxDelayMs: 1_000_000, maxAttempts: 2, deadLetterAfterMs: 3_600_000 } });
    await queue.ensureQueues(['vmi']);
    const dying = (id: string, key: string, firstReceiveMsAgo: number): SQSRecord => {
      const first = String(Date.now() - firstReceiveMsAgo);
      return { ...extra(id, key, 1), attributes: { ApproximateReceiveCount: '20', SentTimestamp: first, SenderId: 'x', ApproximateFirstReceiveTimestamp: first, MessageGroupId: key } };
    };
    const seen: string[] = [];
    // act
    const res = await processKeyBatch({ Records: [dying('g1', 'ns/g', 2 * 3_600_000), dying('h1', 'ns/h', 60_000)] }, {
      controller: 'vmi',
      queue,
      reconcile: async (rk) => {
        seen.push(rk.message.key);
        return done;
      },
    });
    const dead = await queue.listDeadLetters({ controller: 'vmi' });
    // assert
    assert.deepEqual(seen, ['ns/h'], 'the abandoned key is not reconciled; the one inside its window is');
    assert.deepEqual(res.batchItemFailures, [], 'a dead-lettered key is settled, not a batch failure');
    assert.deepEqual(dead.map((d) => [d.key, d.reason, d.attempts]), [['ns/g', 'LeaseExpired', 20]]);
  });

  test('reserveMs: at least 5 s, twice the slowest key so far', () => {
    assert.equal(reserveMs(0), MIN_RESERVE_MS);
    assert.equal(reserveMs(4_000), 8_000);
  });

  test('KEY_BATCH_CONCURRENCY: unset means every key at once; a bad value is an error that names the variable', () => {
    assert.equal(batchConcurrencyFromEnv({}), undefined);
    assert.equal(batchConcurrencyFromEnv({ KEY_BATCH_CONCURRENCY: '1' }), 1);
    assert.throws(() => batchConcurrencyFromEnv({ KEY_BATCH_CONCURRENCY: 'two' }), /KEY_BATCH_CONCURRENCY="two": expected an integer from 1 to 10/);
    assert.throws(() => batchConcurrencyFromEnv({ KEY_BATCH_CONCURRENCY: '11' }), /KEY_BATCH_CONCURRENCY/);
  });
});
