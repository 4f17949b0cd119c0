import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_RETRY } from '../../shared/queue/port.ts';
import { receivesToExhaust, SQS_MAX_RECEIVE_COUNT, SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { keyMessage, queueConformance, type HarnessOptions, type QueueHarness } from './conformance.ts';
import { startLocalSqs, type LocalSqs } from './fauxqs.ts';

let sqs: LocalSqs;
before(async () => {
  sqs = await startLocalSqs();
});
after(() => sqs.stop());
let n = 0;

/** Fresh queues per test (unique prefix); time is real, so `advance` waits and runs the forwarder. */
async function harness(opts: HarnessOptions): Promise<QueueHarness> {
  const prefix = `t${n++}-${process.pid}`;
  // The queue's own clock runs ahead of fauxqs's by `skew` (the retry window is judged on it).
  let skew = 0;
  const open = () =>
    new SqsKeyQueue({
      client: sqs.client(),
      prefix,
      clock: () => Date.now() + skew,
      ...(opts.retry ? { retry: opts.retry } : {}),
      ...(opts.visibilityTimeoutMs ? { visibilityTimeoutSeconds: Math.ceil(opts.visibilityTimeoutMs / 1000) } : {}),
    });
  let queue = open();
  await queue.ensureQueues();
  return {
    get queue() {
      return queue;
    },
    sendRaw: (controller, body) => queue.sendRaw(controller, body),
    advance: async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      await queue.pumpTimers();
    },
    skew: async (ms) => {
      skew += ms;
    },
    now: () => Date.now() + skew,
    // A restarted process: a new client on the same queues, knowing nothing of the old receipts.
    reopen: async () => {
      await queue.close();
      queue = open();
      return queue;
    },
    caps: { coalescesWaiting: false, ageOfVisible: false },
    close: () => queue.close(),
  };
}

queueConformance('sqs (fauxqs)', harness);

describe('SqsKeyQueue retry policy against the redrive', () => {
  const cases = [
    { name: 'the default policy', retry: DEFAULT_RETRY, want: 22, ok: true },
    { name: 'no window: the count alone', retry: { ...DEFAULT_RETRY, deadLetterAfterMs: 0 }, want: 16, ok: true },
    { name: 'a 4 s ceiling with a ten-minute window (the chaos rigs)', retry: { baseDelayMs: 5, maxDelayMs: 4000, maxAttempts: 16, deadLetterAfterMs: 600_000 }, want: 158, ok: true },
    { name: 'a 1 s ceiling with an hour: 3600 receives', retry: { baseDelayMs: 5, maxDelayMs: 1000, maxAttempts: 16, deadLetterAfterMs: 3_600_000 }, want: SQS_MAX_RECEIVE_COUNT + 1, ok: false },
  ] as const;
  for (const c of cases) {
    test(`${c.name}: ${c.ok ? 'fits under' : 'is refused, it would outrun'} SQS's redrive`, () => {
      // act
      const needed = receivesToExhaust(c.retry);
      const make = (): SqsKeyQueue => new SqsKeyQueue({ client: sqs.client(), prefix: 'policy', retry: c.retry });
      // assert
      assert.equal(needed, c.want, 'receives until a key failing every time is dead-lettered');
      if (c.ok) assert.doesNotThrow(make);
      else assert.throws(make, /retry: policy .* raise maxDelayMs or lower deadLetterAfterMs/);
    });
  }
});

describe('the timer pump (the forwarder Lambda, run locally)', () => {
  test('a timer whose forward fails stays on its queue; the others are forwarded and deleted; the failure is thrown after the pump', async () => {
    // arrange: two keys requeued for now; the first forward to the FIFO queue refused once
    const client = sqs.client();
    const prefix = `pump${n++}-${process.pid}`;
    const queue = new SqsKeyQueue({ client, prefix });
    await queue.ensureQueues(['vmi']);
    await queue.send([keyMessage('default/a', 1, 'ADDED', 'vmi'), keyMessage('default/b', 1, 'ADDED', 'vmi')]);
    for (const rk of await receiveAll(queue, 2)) await queue.requeueAfter('vmi', rk.receipt, 0);
    let refused = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'SendMessageCommand' && refused === 0 && !String((args.input as { QueueUrl?: string }).QueueUrl).includes('timers')) {
          refused++;
          throw Object.assign(new Error('injected'), { name: 'InternalError' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'refuseOneForward' },
    );
    // act
    const pumped = await queue.pumpTimers(['vmi']).then(() => 'no error', (err: Error) => err.message);
    const forwarded = await queue.receive('vmi', 10, 2000);
    const left = await client.send(new GetQueueAttributesCommand({ QueueUrl: (await client.send(new GetQueueUrlCommand({ QueueName: `${prefix}-vmi-timers` }))).QueueUrl, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }));
    // assert
    assert.equal(pumped, 'injected');
    assert.equal(forwarded.length, 1, 'the other timer was forwarded');
    assert.equal(left.Attributes?.ApproximateNumberOfMessagesNotVisible, '1', 'the refused timer is still on its queue, back after its visibility timeout');
  });
});

async function receiveAll(queue: SqsKeyQueue, want: number) {
  const got = [];
  for (let i = 0; i < 10 && got.length < want; i++) got.push(...(await queue.receive('vmi', want - got.length, 1000)));
  return got;
}
