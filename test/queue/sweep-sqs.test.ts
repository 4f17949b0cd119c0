/**
 * A sweep on the AWS path against real SQS semantics (fauxqs): what EventBridge Scheduler sends
 * (the sweep timer, the scheduled time written in) on the controller's standard timer queue → the
 * timer forwarder's plan → the FIFO key queue → the Lambda batch handler with the shared
 * reconcile path → one key per node on the same FIFO queue. A schedule invocation delivered twice
 * sweeps once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DeleteMessageCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { parseKeyMessage } from '../../shared/queue/message.ts';
import { processKeyBatch } from '../../shared/queue/lambda-batch.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { instrumented, type ControllerSpec } from '../../shared/reconcile/instrument.ts';
import { done } from '../../shared/reconcile/outcome.ts';
import { SCHEDULED_TIME, sweepTimerBody } from '../../shared/reconcile/sweep.ts';
import { sqsRecord } from '../support/sqs-event.ts';
import { startLocalSqs, type LocalSqs } from './fauxqs.ts';

let sqs: LocalSqs;
before(async () => {
  sqs = await startLocalSqs();
});
after(() => sqs.stop());

test('Scheduler → timer queue → forwarder → FIFO queue → node function: one key per node, once per scheduled instant', async () => {
  // arrange
  const client = sqs.client();
  const queue = new SqsKeyQueue({ client, prefix: 'sw' });
  await queue.ensureQueues(['node']);
  const url = async (name: string) => (await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;
  const [timers, fifo] = [await url('sw-node-timers'), await url('sw-node.fifo')];
  const scheduled = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000).toISOString().replace('.000Z', 'Z');
  const fired = sweepTimerBody('node').replaceAll(SCHEDULED_TIME, scheduled);
  const lists: string[] = [];
  const kube = { list: async (res: { plural: string }) => (lists.push(res.plural), { items: ['node01', 'node02', 'node03'].map((name) => ({ metadata: { name, uid: `uid-${name}` } })), metadata: {} }) } as unknown as KubeClient;
  const reconciled: string[] = [];
  const spec: ControllerSpec<unknown> = { controller: 'node', reconcile: async (key) => (reconciled.push(key), done), deps: () => ({}) };
  const receive = async (): Promise<Message[]> => (await client.send(new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }))).Messages ?? [];
  // act: Scheduler delivers one invocation twice (at-least-once); the forwarder runs
  await client.send(new SendMessageCommand({ QueueUrl: timers, MessageBody: fired }));
  await client.send(new SendMessageCommand({ QueueUrl: timers, MessageBody: fired }));
  const forwarded = await queue.pumpTimers(['node']);
  const sweeps = await receive();
  const response = await processKeyBatch({ Records: sweeps.map((m) => sqsRecord(m, 'sw-node.fifo')) }, {
    controller: 'node',
    queue,
    reconcile: instrumented(spec, { kube, metrics: new MetricsRegistry(), log: silentLogger, queue }),
  });
  await client.send(new DeleteMessageCommand({ QueueUrl: fifo, ReceiptHandle: sweeps[0]!.ReceiptHandle! })); // what the trigger does with a success
  const keys: string[] = [];
  for (let m = await receive(); m.length > 0; m = await receive()) keys.push(...m.map((x) => { const k = parseKeyMessage(x.Body!); return `${k.key} ${k.cause.kind}/${k.cause.event}`; }));
  // assert
  assert.equal(forwarded, 2, 'both copies planned as due');
  assert.deepEqual(sweeps.map((m) => parseKeyMessage(m.Body!).key), ['@sweep'], 'the second copy was absorbed by FIFO dedup');
  assert.deepEqual(response.batchItemFailures, []);
  assert.deepEqual(lists, ['nodes'], 'one LIST');
  assert.deepEqual(reconciled, []);
  assert.deepEqual(keys.sort(), ['node01 Node/SWEEP', 'node02 Node/SWEEP', 'node03 Node/SWEEP']);
});
