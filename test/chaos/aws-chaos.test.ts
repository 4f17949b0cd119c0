/**
 * The chaos suite through the AWS backends: SQS FIFO queues in fauxqs and the state table in
 * DynamoDB Local, the real AWS SDK and our adapters, with throttling, 5xx, timeouts and lost lease
 * extensions injected as SDK middleware (aws-faults.ts), consumed by the local runtime's workers
 * or by Lambda-shaped invocations killed at their deadline (lambda-invoker.ts). Needs DynamoDB Local (Java), which
 * `npm test` installs; without it the test fails saying so. CHAOS_SEED pins the seed of the two
 * chaos runs (a failure prints the one it used).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { startLocalSqs } from '../queue/fauxqs.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { AwsFaults } from './aws-faults.ts';
import { chaosViolations, runChaos } from './run-chaos.ts';
import { seededRandom } from './injectors.ts';
import { keyMessage } from '../queue/conformance.ts';
import { openChaosStore } from './store.ts';

const pinnedSeed = process.env.CHAOS_SEED ? { seed: Number(process.env.CHAOS_SEED) } : {};

test('the SDK middleware: a burst outlasts the SDK retries with the service error; a lost lease extension is answered done and never sent', async () => {
  // arrange
  const sqs = await startLocalSqs();
  try {
    const client = sqs.client();
    const queue = new SqsKeyQueue({ client, prefix: 'mw', visibilityTimeoutSeconds: 1 });
    await queue.ensureQueues(['vmi']);
    const faults = new AwsFaults(seededRandom(7), 0, 1);
    faults.attach(client, 'sqs');
    await queue.send([keyMessage('default/a', 1, 'ADDED', 'vmi')]);
    const [got] = await queue.receive('vmi', 1, 1000);
    // act: every extension lost; the visibility (1 s) lapses under the "running reconcile"
    const extended = await queue.extendLease('vmi', got!.receipt);
    await new Promise((r) => setTimeout(r, 1500));
    const again = await queue.receive('vmi', 1, 2000);
    faults.burst(10);
    const throttled = await client.send(new GetQueueAttributesCommand({ QueueUrl: sqs.endpoint + '/x', AttributeNames: ['All'] })).then(() => 'answered', (err: Error) => err.name);
    // assert
    assert.equal(extended, true, 'the caller was told the lease was extended');
    assert.equal(faults.counts.lostHeartbeats, 1);
    assert.equal(again[0]?.message.key, 'default/a', 'delivered again while the first worker still held it');
    assert.match(throttled, /ThrottlingException|RequestThrottled|InternalError|TimeoutError/);
    assert.ok(faults.counts.awsThrottles + faults.counts.aws5xx + faults.counts.awsTimeouts >= 3, 'the SDK retried (3 attempts) and every attempt failed');
    assert.equal(new ProvisionedThroughputExceededException({ message: 'x', $metadata: {} }).name, 'ProvisionedThroughputExceededException', 'the DynamoDB throttle is the SDK’s own class');
  } finally {
    await sqs.stop();
  }
});

test('a key requeued for later comes back through the timer queue, as the forwarder Lambda brings it (seed 935206 lost two VMIs whose expectation wait went there and stayed)', async () => {
  // arrange: the chaos store, its faults off; a key received and requeued for one second
  const store = await openChaosStore(seededRandom(935206), { backend: 'aws' });
  try {
    store.aws!.armed = false;
    await store.queue.send([keyMessage('default/waits', 1, 'ADDED', 'vmi')]);
    const [got] = await store.queue.receive('vmi', 1, 2000);
    // act
    await store.queue.requeueAfter('vmi', got!.receipt, 1);
    const back = await store.queue.receive('vmi', 1, 10_000);
    for (let i = 0; i < 50 && !store.injected().timersForwarded; i++) await new Promise((r) => setTimeout(r, 100));
    // assert
    assert.equal(back[0]?.message.key, 'default/waits', 'the requeued key was delivered again');
    assert.ok(store.injected().timersForwarded! >= 1, 'forwarded by the timer pump');
  } finally {
    await store.close();
  }
});

test('over SQS and DynamoDB under throttling, 5xx, timeouts, lost heartbeats and the suite’s other faults: no lost key, no duplicate pod, poison dead-lettered and replayed', async () => {
  // arrange + act
  const report = await runChaos({ vmis: Number(process.env.CHAOS_AWS_VMIS ?? 12), backend: 'aws', timeoutMs: 180_000, ...pinnedSeed });
  process.stdout.write(`# seed ${report.seed}, ${report.seconds} s; injected ${JSON.stringify(report.injected)}\n`);
  // assert
  assert.ok(report.injected.awsThrottles! + report.injected.aws5xx! + report.injected.awsTimeouts! > 0, `no AWS fault was injected (seed ${report.seed})`);
  assert.ok(report.injected.workerKills! > 0, `no worker was killed (seed ${report.seed})`);
  assert.deepEqual(chaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});

test('Lambda-shaped invocations over SQS, some killed at their deadline with part of their batch done, others by a crash: no lost key, no duplicate pod', async () => {
  // arrange + act
  const report = await runChaos({ vmis: Number(process.env.CHAOS_LAMBDA_VMIS ?? 6), backend: 'aws', consumer: 'lambda', timeoutMs: 180_000, ...pinnedSeed });
  process.stdout.write(`# seed ${report.seed}, ${report.seconds} s; injected ${JSON.stringify(report.injected)}\n`);
  // assert
  assert.ok(report.injected.invocations! > 0, `no invocation ran (seed ${report.seed})`);
  assert.ok(report.injected.killedAtDeadline! + report.injected.killedByCrash! > 0, `no invocation was killed (seed ${report.seed}): the run proved nothing`);
  assert.deepEqual(chaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});
