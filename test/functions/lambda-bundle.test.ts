/**
 * Smoke test of the deployable artefacts: build the Lambda bundles (dist/<fn>/index.mjs, into
 * a temp folder, with the Lambda-only build settings: env-only credentials, ESM SDK), import each
 * in a fresh Node process configured only by environment variables — the Kubernetes connection
 * from KUBE_API_SERVER (the sandbox API server), SQS from fauxqs, DynamoDB from DynamoDB Local,
 * credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY as Lambda sets them — and call
 * `handler()` with an SQS event made from real receives.
 * vmi: one VMI key and one malformed record → the launcher pod appears, made by the bundle's
 * identity, and the malformed record is dead-lettered without failing the batch.
 * vm: one VM key of a `runStrategy: Always` VM → its VMI appears, made by the bundle's identity.
 * timer-forwarder + migration: a due timer is forwarded to the migration queue, and the migration
 * bundle settles that key (no such migration) without failing the batch.
 */
import { LAMBDA_BUNDLES, type LambdaBundle } from '../../infra/aws/bundles.ts';
import { CONTROLLERS, type Controller } from '../../shared/controllers.ts';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parse } from 'yaml';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import { buildBundles } from '../../scripts/build.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { queueNames, SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { newTimer } from '../../shared/queue/timer-forwarder.ts';
import { ensureTable } from '../../shared/state/dynamodb-state.ts';
import { keyMessage } from '../queue/conformance.ts';
import { queueUrlEnv, startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { projectRoot } from '../support/reference.ts';
import { localLambdaEnv } from '../support/lambda-env.ts';
import { sqsRecord } from '../support/sqs-event.ts';
import { PODS, VMIS, VMS } from '../../shared/api/resources.ts';

const run = promisify(execFile);
const PREFIX = 'smoke';
const TABLE = 'smoke-state';
/** The bundles built and checked here: every Lambda of the registry (shared/controllers.ts). */
const FUNCTIONS = LAMBDA_BUNDLES;
type Fn = LambdaBundle;
/** Each bundle's bearer token: the sandbox audits requests by it. */
const TOKEN = Object.fromEntries(FUNCTIONS.map((f) => [f, f === 'timer-forwarder' ? 'timer-lambda' : `${f}-lambda`])) as Record<Fn, string>;

let outDir: string;
let apiServer: ApiServer;
let sqs: LocalSqs;
let dynamo: DynamoDbLocal;
let queue: SqsKeyQueue;
let kube: KubeClient;
/** QUEUE_URL_<FN>, DLQ_URL_<FN>, TIMER_QUEUE_URL_<FN> of every function, as the CDK stack sets them. */
const queueEnv: Record<string, string> = {};

before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'lambda-bundle-'));
  await buildBundles({ only: [...FUNCTIONS], outDir, log: () => undefined });
  // Each is assigned as soon as it is up, so that after() stops whatever started even when
  // another of them failed to (a leaked server would hold the test process open).
  const started = await Promise.allSettled([
    startApiServer({ port: 0 }).then((s) => (apiServer = s)),
    startLocalSqs().then((s) => (sqs = s)),
    startDynamoDbLocal().then((s) => (dynamo = s)),
  ]);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  queue = new SqsKeyQueue({ client: sqs.client(), prefix: PREFIX });
  await queue.ensureQueues([...CONTROLLERS]);
  Object.assign(queueEnv, await queueUrlEnv(sqs, PREFIX));
  const ddb = dynamo.client();
  await ensureTable(ddb, TABLE);
  ddb.destroy();
  kube = createKubeClient(apiServer.kubeConfig('test'));
});
after(async () => {
  await Promise.all([apiServer?.close(), sqs?.stop(), dynamo?.stop()]);
  rmSync(outDir, { recursive: true, force: true });
});

function bundleUrl(fn: Fn): string {
  return pathToFileURL(join(outDir, fn, 'index.mjs')).href;
}

/** What the Lambda trigger would hand over: everything visible on a queue (default: the controller's key queue). */
async function triggerEvent(c: Controller, which: 'queue' | 'timers' = 'queue'): Promise<SQSEvent> {
  const client = sqs.client();
  const QueueName = queueNames(PREFIX, c)[which];
  const QueueUrl = (await client.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl;
  const got = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60 }));
  return { Records: (got.Messages ?? []).map((m: Message): SQSRecord => sqsRecord(m, QueueName)) };
}

/** Imports the function's bundle in a fresh process, configured by environment only, and calls handler(event). */
async function invokeBundle(fn: Fn, event: SQSEvent): Promise<SQSBatchResponse> {
  const script = [
    `const { handler } = await import(${JSON.stringify(bundleUrl(fn))});`,
    'const res = await handler(JSON.parse(process.env.SMOKE_EVENT));',
    "process.stdout.write('RESULT ' + JSON.stringify(res) + '\\n');",
    // Keep-alive sockets would keep the process up; a Lambda container is frozen instead.
    'process.exit(0);',
  ].join('\n');
  const env = {
    ...localLambdaEnv({ apiServer: apiServer.url, token: TOKEN[fn], queuePrefix: PREFIX, queueUrls: queueEnv, table: TABLE, sqsEndpoint: sqs.endpoint, dynamoEndpoint: dynamo.endpoint, functionName: `virt-reconciler-${fn}` }),
    SMOKE_EVENT: JSON.stringify(event),
  };
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { env, timeout: 60_000 });
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  assert.ok(line, `the handler must return a batch response; stdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as SQSBatchResponse;
}

/** The source files a bundle was made of (its source map). */
function sourcesOf(fn: Fn): string[] {
  return (JSON.parse(readFileSync(join(outDir, fn, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
}

function vmiFixture(): VirtualMachineInstance {
  return parse(readFileSync(join(projectRoot, 'test/api/fixtures/vmi-minimal.yaml'), 'utf8')) as VirtualMachineInstance;
}

describe('the Lambda bundles, run as Lambda would run them', () => {
  // What must stay out, and why (scripts/build.ts, docs/kube-client.md).
  const unwanted: [string, RegExp][] = [
    ['@kubernetes/client-node or undici (the node:http client replaces them)', /@kubernetes\/client-node|\/undici\//],
    ["the SDK's default credential chain and its SSO/STS clients (env-only in Lambda)", /@aws-sdk\/credential-provider-(node|ini|sso|process|web-identity|http)\/|@aws-sdk\/nested-clients\//],
    ['CommonJS builds of the SDK clients (not tree-shaken)', /@aws-sdk\/client-(sqs|dynamodb)\/dist-cjs\//],
  ];
  for (const fn of FUNCTIONS) {
    for (const [what, pattern] of unwanted) {
      test(`the ${fn} bundle does not contain ${what}`, () => {
        assert.deepEqual(sourcesOf(fn).filter((s) => pattern.test(s)), [], `back in the ${fn} bundle`);
      });
    }
    test(`the ${fn} bundle loads Node built-ins with require, not as ES modules (only the banner's module)`, () => {
      // A built-in's ES namespace reads every export, running lazy getters (http.WebSocket loads undici).
      const text = readFileSync(join(outDir, fn, 'index.mjs'), 'utf8');
      const esmBuiltins = [...text.matchAll(/\bfrom\s*["']((?:node:)?[a-z_][a-z0-9_/]*)["']/g)].map((m) => m[1]);
      assert.deepEqual(esmBuiltins, ['module'], 'scripts/build.ts builtinsViaRequire is not applied');
    });
    test(`the ${fn} bundle takes its credentials from the environment (shared/runtime/env-credentials.ts)`, () => {
      assert.ok(sourcesOf(fn).some((s) => s.endsWith('shared/runtime/env-credentials.ts')), 'the credential-provider-node alias is not applied');
    });
  }

  test('an SQS event with a VMI key creates its launcher pod; a malformed record is dead-lettered', async () => {
    // arrange
    const vmi = await kube.create(VMIS, { ...vmiFixture(), metadata: { name: 'smoke', namespace: 'default' } });
    const selector = `kubevirt.io=virt-launcher,kubevirt.io/created-by=${vmi.metadata?.uid}`;
    await queue.sendRaw('vmi', '{"v":1,"controller":"vmi"', 'garbage');
    // act: a reconcile may take a pass before it creates the pod (one kind of mutation a pass),
    // so deliver the key again, with a newer cause, until it does (bounded)
    const responses: SQSBatchResponse[] = [];
    for (let rv = 1; rv <= 3 && (await kube.list(PODS, 'default', { labelSelector: selector })).items.length === 0; rv++) {
      // (rv 1, 2, 3: distinct dedup ids, all older than the VMI, so every read sees it)
      await queue.send([keyMessage('default/smoke', rv)]);
      responses.push(await invokeBundle('vmi', await triggerEvent('vmi')));
    }
    // assert
    const pods = (await kube.list(PODS, 'default', { labelSelector: selector })).items;
    assert.equal(pods.length, 1, `one launcher pod; responses ${JSON.stringify(responses)}`);
    assert.ok(apiServer.audit.query({ identity: TOKEN.vmi, resource: 'pods', verb: 'create' }).length === 1, 'the pod was created by the bundle, through KUBE_API_SERVER');
    assert.deepEqual(responses.flatMap((r) => r.batchItemFailures), [], 'no record fails the batch');
    const dead = await queue.listDeadLetters({ controller: 'vmi' });
    assert.deepEqual(dead.map((d) => d.reason), ['MalformedMessage']);
  });

  test('an SQS event with the key of a runStrategy: Always VM creates its VMI', async () => {
    // arrange
    const { spec, metadata } = vmiFixture();
    await kube.create(VMS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'smoke-vm', namespace: 'default' },
      spec: { runStrategy: 'Always', template: { metadata: { labels: metadata?.labels ?? {} }, spec: spec! } },
    });
    // act: as for the VMI, a pass may do something else first (e.g. its finalizer); bounded
    const responses: SQSBatchResponse[] = [];
    for (let rv = 1; rv <= 3 && (await kube.get(VMIS, 'default', 'smoke-vm')) === undefined; rv++) {
      await queue.send([keyMessage('default/smoke-vm', rv, 'MODIFIED', 'vm')]);
      responses.push(await invokeBundle('vm', await triggerEvent('vm')));
    }
    // assert
    assert.ok(await kube.get(VMIS, 'default', 'smoke-vm'), `the VM's VMI exists; responses ${JSON.stringify(responses)}`);
    assert.equal(apiServer.audit.query({ identity: TOKEN.vm, resource: 'virtualmachineinstances', verb: 'create' }).length, 1, 'the VMI was created by the vm bundle, through KUBE_API_SERVER');
    assert.deepEqual(responses.flatMap((r) => r.batchItemFailures), [], 'no record fails the batch');
  });

  test('a due timer goes through the timer-forwarder bundle to the migration queue, and the migration bundle reconciles its key', async () => {
    // arrange: a requeue-after timer that is already due, as SqsKeyQueue.requeueAfter writes it
    const due = newTimer(keyMessage('default/smoke-vmim', 1, 'MODIFIED', 'migration'), 0, Date.now());
    await sqs.client().send(new SendMessageCommand({ QueueUrl: queueEnv.TIMER_QUEUE_URL_MIGRATION, MessageBody: due.body }));
    // act
    const forwarded = await invokeBundle('timer-forwarder', await triggerEvent('migration', 'timers'));
    const keys = await triggerEvent('migration');
    const reconciled = await invokeBundle('migration', keys);
    // assert
    assert.deepEqual(forwarded.batchItemFailures, [], 'the timer is forwarded');
    assert.deepEqual(keys.Records.map((r) => (JSON.parse(r.body) as { key: string }).key), ['default/smoke-vmim'], 'the key reaches the migration queue');
    assert.deepEqual(reconciled.batchItemFailures, [], 'a key of a migration that does not exist is settled, not failed');
  });

  test('without a Kubernetes connection in the environment, the bundle says which variables to set', async () => {
    // act
    const script = `const { handler } = await import(${JSON.stringify(bundleUrl('vmi'))}); await handler({ Records: [] });`;
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
