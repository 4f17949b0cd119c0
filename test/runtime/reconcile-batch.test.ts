/**
 * The Lambda handler body (shared/runtime/reconcile-batch.ts) writes the trace entries of every
 * key of its batch as ONE `recordBatch` (one packed DynamoDB item), before it answers, and a
 * failing trace store fails no key. SQS is fauxqs (real receives); the table is SQLite here, as
 * the DynamoDB packing has its own tests (test/state/dynamodb-state.test.ts).
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, test } from 'node:test';
import { GetQueueUrlCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { KubeClient } from '../../shared/kube/client.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { done } from '../../shared/reconcile/outcome.ts';
import { reconcileBatch } from '../../shared/runtime/reconcile-batch.ts';
import type { LambdaEnv } from '../../shared/runtime/lambda-env.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import type { StateStore } from '../../shared/state/port.ts';
import { keyMessage } from '../queue/conformance.ts';
import { startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { sqsRecord } from '../support/sqs-event.ts';

let sqs: LocalSqs;
before(async () => {
  sqs = await startLocalSqs();
});
after(() => sqs.stop());

const warnings: string[] = [];
const log: Logger = { info() {}, warn: (m) => void warnings.push(m), error() {}, with: () => log };

async function batchOf(prefix: string, keys: string[]): Promise<{ event: SQSEvent; queue: SqsKeyQueue }> {
  const client = sqs.client();
  const queue = new SqsKeyQueue({ client, prefix });
  await queue.ensureQueues(['vmi']);
  await queue.send(keys.map((k) => keyMessage(k, 1)));
  const QueueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: `${prefix}-vmi.fifo` }))).QueueUrl;
  const msgs = (await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }))).Messages ?? [];
  assert.equal(msgs.length, keys.length);
  return { event: { Records: msgs.map((m) => sqsRecord(m, `${prefix}-vmi.fifo`)) }, queue };
}

function envWith(queue: SqsKeyQueue, state: StateStore): LambdaEnv {
  return { queue, state, kube: {} as KubeClient, clusterConfig: async () => { throw new Error('not used'); }, log, metrics: new MetricsRegistry() };
}

const spec = { controller: 'vmi' as const, deps: () => ({}), reconcile: async () => done };

test('a batch of three keys: three reconciles, one trace write holding all three, no failures', async () => {
  // arrange
  const { event, queue } = await batchOf('rb1', ['ns/a', 'ns/b', 'ns/c']);
  const state = openSqliteState({ db: new DatabaseSync(':memory:') });
  const writes: number[] = [];
  const traces = { ...state.traces, record: async () => assert.fail('no per-key write'), recordBatch: async (entries: Parameters<StateStore['traces']['recordBatch']>[0], now: number) => {
    writes.push(entries.length);
    await state.traces.recordBatch(entries, now);
  } };
  // act
  const response = await reconcileBatch(event, envWith(queue, { ...state, traces }), spec);
  // assert
  assert.deepEqual(response.batchItemFailures, []);
  assert.deepEqual(writes, [3]);
  for (const key of ['ns/a', 'ns/b', 'ns/c']) assert.equal((await state.traces.recent('vmi', key, Date.now())).length, 1, key);
  await state.close();
});

test('a trace store that fails: the batch still succeeds, and the warning names the keys', async () => {
  // arrange
  const { event, queue } = await batchOf('rb2', ['ns/a', 'ns/b']);
  const state = openSqliteState({ db: new DatabaseSync(':memory:') });
  const traces = { ...state.traces, recordBatch: async () => { throw new Error('table down'); } };
  warnings.length = 0;
  // act
  const response = await reconcileBatch(event, envWith(queue, { ...state, traces }), spec);
  // assert
  assert.deepEqual(response.batchItemFailures, []);
  assert.deepEqual(warnings, ['traces not recorded']);
  await state.close();
});
