/**
 * Smoke test of the deployable artefact: build the vmi bundle (dist/vmi/index.mjs, into a temp
 * folder), import it in a fresh Node process configured only by environment variables — the
 * Kubernetes connection from KUBE_API_SERVER (the sandbox API server), SQS from fauxqs, DynamoDB
 * from DynamoDB Local — and call `handler()` with an SQS event made from real receives: one VMI key
 * and one malformed record. The launcher pod must appear, made by the bundle's identity, and the
 * malformed record must be dead-lettered without failing the batch.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { GetQueueUrlCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parse } from 'yaml';
import { startApiServer, type ApiServer } from '../../infra/sandbox/apiserver/index.ts';
import { buildBundles } from '../../scripts/build.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { queueNames, SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { ensureTable } from '../../shared/state/dynamodb-state.ts';
import { keyMessage } from '../queue/conformance.ts';
import { startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { projectRoot } from '../support/reference.ts';
import { sqsRecord } from '../support/sqs-event.ts';

const run = promisify(execFile);
const PREFIX = 'smoke';
const TABLE = 'smoke-state';
/** The bundle's bearer token: the sandbox counts requests by it. */
const LAMBDA = 'vmi-lambda';

let outDir: string;
let apiServer: ApiServer;
let sqs: LocalSqs;
let dynamo: DynamoDbLocal;
let queue: SqsKeyQueue;
let kube: KubeClient;
/** QUEUE_URL_VMI, DLQ_URL_VMI, TIMER_QUEUE_URL_VMI, as the CDK stack sets them. */
let queueEnv: Record<string, string>;

before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'vmi-bundle-'));
  await buildBundles({ only: ['vmi'], outDir, log: () => undefined });
  [apiServer, sqs, dynamo] = await Promise.all([startApiServer({ port: 0 }), startLocalSqs(), startDynamoDbLocal()]);
  queue = new SqsKeyQueue({ client: sqs.client(), prefix: PREFIX });
  await queue.ensureQueues(['vmi']);
  // fauxqs names its queues http://sqs.<region>.localhost:<port>/…, which does not resolve here;
  // the SDK in the bundle uses the queue URL as its endpoint, so hand it loopback URLs.
  const urlOf = async (QueueName: string): Promise<string> => {
    const url = new URL((await sqs.client().send(new GetQueueUrlCommand({ QueueName }))).QueueUrl ?? '');
    return new URL(url.pathname, sqs.endpoint).href;
  };
  const names = queueNames(PREFIX, 'vmi');
  queueEnv = { QUEUE_URL_VMI: await urlOf(names.queue), DLQ_URL_VMI: await urlOf(names.dlq), TIMER_QUEUE_URL_VMI: await urlOf(names.timers) };
  const ddb = dynamo.client();
  await ensureTable(ddb, TABLE);
  ddb.destroy();
  kube = createKubeClient(apiServer.kubeConfig('test'));
});
after(async () => {
  await Promise.all([apiServer?.close(), sqs?.stop(), dynamo?.stop()]);
  rmSync(outDir, { recursive: true, force: true });
});

function record(m: Message): SQSRecord {
  return sqsRecord(m, `${PREFIX}-vmi.fifo`);
}

/** What the Lambda trigger would hand over: everything visible on the vmi queue. */
async function triggerEvent(): Promise<SQSEvent> {
  const client = sqs.client();
  const QueueUrl = (await client.send(new GetQueueUrlCommand({ QueueName: `${PREFIX}-vmi.fifo` }))).QueueUrl;
  const got = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }));
  return { Records: (got.Messages ?? []).map(record) };
}

/** Imports the bundle in a fresh process, configured by environment only, and calls handler(event). */
async function invokeBundle(event: SQSEvent): Promise<SQSBatchResponse> {
  const script = [
    `const { handler } = await import(${JSON.stringify(pathToFileURL(join(outDir, 'vmi', 'index.mjs')).href)});`,
    'const res = await handler(JSON.parse(process.env.SMOKE_EVENT));',
    "process.stdout.write('RESULT ' + JSON.stringify(res) + '\\n');",
    // Keep-alive sockets would keep the process up; a Lambda container is frozen instead.
    'process.exit(0);',
  ].join('\n');
  const env = {
    PATH: process.env.PATH ?? '',
    KUBE_API_SERVER: apiServer.url,
    KUBE_TOKEN: LAMBDA,
    KUBE_INSECURE_SKIP_TLS_VERIFY: 'true',
    QUEUE_PREFIX: PREFIX,
    ...queueEnv,
    STATE_TABLE_NAME: TABLE,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_LAMBDA_FUNCTION_NAME: 'virt-reconciler-vmi',
    SMOKE_EVENT: JSON.stringify(event),
  };
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { env, timeout: 60_000 });
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  assert.ok(line, `the handler must return a batch response; stdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as SQSBatchResponse;
}

describe('the vmi Lambda bundle, run as Lambda would run it', () => {
  test('the bundle does not contain @kubernetes/client-node or undici', () => {
    const map = JSON.parse(readFileSync(join(outDir, 'vmi', 'index.mjs.map'), 'utf8')) as { sources: string[] };
    assert.deepEqual(map.sources.filter((s) => /@kubernetes\/client-node|\/undici\//.test(s)), [], 'client-node is back in the Lambda bundle');
  });

  test('an SQS event with a VMI key creates its launcher pod; a malformed record is dead-lettered', async () => {
    // arrange
    const fixture = parse(readFileSync(join(projectRoot, 'test/api/fixtures/vmi-minimal.yaml'), 'utf8')) as VirtualMachineInstance;
    const vmi = await kube.createVMI({ ...fixture, metadata: { name: 'smoke', namespace: 'default' } });
    const selector = `kubevirt.io=virt-launcher,kubevirt.io/created-by=${vmi.metadata?.uid}`;
    await queue.sendRaw('vmi', '{"v":1,"controller":"vmi"', 'garbage');
    // act: a reconcile may take a pass before it creates the pod (one kind of mutation a pass),
    // so deliver the key again, with a newer cause, until it does (bounded)
    const responses: SQSBatchResponse[] = [];
    for (let rv = 1; rv <= 3 && (await kube.listPods('default', { labelSelector: selector })).items.length === 0; rv++) {
      // (rv 1, 2, 3: distinct dedup ids, all older than the VMI, so every read sees it)
      await queue.send([keyMessage('default/smoke', rv)]);
      responses.push(await invokeBundle(await triggerEvent()));
    }
    // assert
    const pods = (await kube.listPods('default', { labelSelector: selector })).items;
    assert.equal(pods.length, 1, `one launcher pod; responses ${JSON.stringify(responses)}`);
    assert.ok(apiServer.audit.query({ identity: LAMBDA, resource: 'pods', verb: 'create' }).length === 1, 'the pod was created by the bundle, through KUBE_API_SERVER');
    assert.deepEqual(responses.flatMap((r) => r.batchItemFailures), [], 'no record fails the batch');
    const dead = await queue.listDeadLetters({ controller: 'vmi' });
    assert.deepEqual(dead.map((d) => d.reason), ['MalformedMessage']);
  });

  test('without a Kubernetes connection in the environment, the bundle says which variables to set', async () => {
    // act
    const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(outDir, 'vmi', 'index.mjs')).href)}); await handler({ Records: [] });`;
    const err = await run(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', STATE_TABLE_NAME: TABLE, AWS_REGION: 'us-east-1' } }).then(
      () => undefined,
      (e: { stderr?: string }) => e,
    );
    // assert
    assert.ok(err, 'the handler must fail at cold start');
    assert.match(err.stderr ?? '', /KUBE_API_SERVER/);
    assert.match(err.stderr ?? '', /EKS_CLUSTER_ENDPOINT/);
  });
});
