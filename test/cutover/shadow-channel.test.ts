/**
 * Shadow mode on AWS: the functions' decisions cross the shadow queue (SQS FIFO in fauxqs, the real
 * SDK) to the relay's judge, which writes divergences to the state table (DynamoDB Local), where
 * `virt-reconciler divergences --aws` reads them (the real CLI in a child process).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import { DynamoDbDivergences } from '../../shared/cutover/divergence-store.ts';
import { decisionOf } from '../../shared/cutover/decision.ts';
import { channelHooks, parseShadowMessage, ShadowPump, SqsShadowChannel } from '../../shared/cutover/shadow-channel.ts';
import { ShadowRecorder } from '../../shared/cutover/shadow-recorder.ts';
import type { ShadowWrite } from '../../shared/kube/guarded-writes.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { ensureTable } from '../../shared/state/dynamodb-state.ts';
import { startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { projectRoot } from '../support/reference.ts';

const lines: string[] = [];
const log: Logger = { info: (m) => void lines.push(`info ${m}`), warn: (m) => void lines.push(`warn ${m}`), error: (m) => void lines.push(`error ${m}`), with: () => log };

/** A VMI status patch as the VMI controller's dry run would answer it. */
function statusPatch(name: string, phase: string): ShadowWrite {
  return { verb: 'patch', method: 'patch', resource: VMIS, subresource: undefined, namespace: 'default', name, body: { status: { phase } }, patchType: 'merge', answer: { result: { metadata: { name } } } };
}

describe('the shadow message', () => {
  test('malformed bodies are refused, saying what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not JSON/],
      ['{"v":2}', /not a shadow message/],
      ['{"v":1,"kind":"decision","controller":"","key":"k"}', /controller and key/],
      ['{"v":1,"kind":"settled","controller":"vmi","key":"default/a"}', /startedAt must be a number/],
      ['{"v":1,"kind":"decision","controller":"vmi","key":"default/a","at":1,"decision":{}}', /write, target/],
      ['{"v":1,"kind":"other","controller":"vmi","key":"default/a"}', /unknown kind "other"/],
    ];
    for (const [body, message] of cases) assert.throws(() => parseShadowMessage(body), message, body);
  });
});

describe('the shadow queue and the divergences table (fauxqs, DynamoDB Local)', () => {
  let sqs: LocalSqs;
  let ddb: DynamoDbLocal;
  let url: string;
  const table = `shadow-${process.pid}`;

  before(async () => {
    [sqs, ddb] = await Promise.all([startLocalSqs(), startDynamoDbLocal()]);
    url = (await sqs.client().send(new CreateQueueCommand({ QueueName: `shadow-${process.pid}.fifo`, Attributes: { FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } }))).QueueUrl!;
    await ensureTable(ddb.client(), table);
  });
  after(async () => {
    await Promise.all([sqs?.stop(), ddb?.stop()]);
  });

  test("a key's marks reach the relay's recorder in order; a malformed message is dropped and counted; one too large is not sent", async () => {
    // arrange
    const client = sqs.client();
    const metrics = new MetricsRegistry();
    const channel = new SqsShadowChannel({ client, url, log, metrics });
    const got: string[] = [];
    const pump = new ShadowPump({ client, url, log, recorder: { recordDecision: (c, k, d, at) => void got.push(`decision ${c} ${k} ${d.write} ${at}`), settled: (c, k, startedAt) => void got.push(`settled ${c} ${k} ${startedAt}`) } });
    const decision = decisionOf(statusPatch('a', 'Scheduled'))!;
    // act
    const sent = [
      await channel.send({ v: 1, kind: 'decision', controller: 'vmi', key: 'default/a', at: 1000, decision }),
      await channel.send({ v: 1, kind: 'settled', controller: 'vmi', key: 'default/a', startedAt: 900 }),
      await channel.send({ v: 1, kind: 'decision', controller: 'vmi', key: 'default/big', at: 1000, decision: { ...decision, write: 'x'.repeat(300 * 1024) } }),
    ];
    await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"v":1,"kind":"nope"}', MessageGroupId: 'junk', MessageDeduplicationId: 'junk' }));
    for (let i = 0; i < 10 && got.length + pump.counts.malformed < 3; i++) await pump.once(1);
    // assert
    assert.deepEqual(sent, [true, true, false]);
    assert.deepEqual(got, ['decision vmi default/a patch virtualmachineinstances 1000', 'settled vmi default/a 900']);
    assert.equal(pump.counts.malformed, 1);
    assert.equal(metrics.total('shadow_decisions_unsent_total'), 1);
    assert.ok(lines.some((l) => l.startsWith('warn shadow decision not sent')));
    assert.equal(await pump.once(0), 0, 'every message was deleted once handed');
  });

  test("the functions' hooks → the shadow queue → the relay's judge → the state table → `divergences --aws`", async () => {
    // arrange: the live VMI is Running; our dry run would have made it Scheduled (a divergence), and a pod agrees
    const client = sqs.client();
    const metrics = new MetricsRegistry();
    const hooks = channelHooks(new SqsShadowChannel({ client, url, log, metrics }), log, metrics);
    const sink = new DynamoDbDivergences(ddb.client(), table);
    const live: Record<string, unknown> = { 'VirtualMachineInstance/b': { metadata: { name: 'b' }, status: { phase: 'Running' } }, 'Pod/p': { metadata: { name: 'p' }, spec: { x: 1 } } };
    const recorder = new ShadowRecorder({ sink, read: async (t) => (live[`${t.kind}/${t.name}`] ? [live[`${t.kind}/${t.name}`]] : []), windowMs: 10, lateMs: 10 });
    const pump = new ShadowPump({ client, url, log, recorder });
    // act
    await hooks.record('vmi', 'default/b', statusPatch('b', 'Scheduled'));
    await hooks.record('vmi', 'default/c', { verb: 'update', method: 'update', resource: PODS, namespace: 'default', name: 'p', body: { metadata: { name: 'p' }, spec: { x: 1 } }, answer: { result: { metadata: { name: 'p' }, spec: { x: 1 } } } });
    for (let i = 0; i < 10 && recorder.counts.decisions < 2; i++) await pump.once(1);
    await recorder.stop(true);
    const stored = await sink.list();
    const cli = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['cli/main.ts', 'divergences', '--aws', '--table', table],
        { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    // assert
    assert.deepEqual({ agreed: recorder.counts.agreed, diverged: recorder.counts.diverged }, { agreed: 1, diverged: 1 });
    assert.deepEqual(stored.map((d) => [d.controller, d.key, d.write, d.object, d.count, d.fields.map((f) => `${f.path}: ${JSON.stringify(f.ours)} / ${JSON.stringify(f.live)}`)]), [
      ['vmi', 'default/b', 'patch virtualmachineinstances', 'VirtualMachineInstance default/b', 1, ['status.phase: "Scheduled" / "Running"']],
    ]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stdout, /vmi default\/b\n {2}patch virtualmachineinstances VirtualMachineInstance default\/b \(×1,/);
    assert.match(cli.stdout, /status\.phase: ours "Scheduled", live "Running"/);
  });

  test('the same divergence again is one item whose count grows; a controller filter; --table without --aws is refused', async () => {
    // arrange
    const sink = new DynamoDbDivergences(ddb.client(), `${table}`);
    const d = { at: 5000, controller: 'migration', key: 'default/m', write: 'create pods', object: 'Pod default/virt-launcher-m-*', fields: [{ path: 'spec.image', ours: 'a', live: 'b' }] };
    // act
    await sink.add(d);
    await sink.add({ ...d, at: 6000 });
    const mine = await sink.list({ controller: 'migration' });
    const refused = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(process.execPath, ['cli/main.ts', 'divergences', '--table', table], { cwd: projectRoot, encoding: 'utf8' }, (err, _o, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr })),
    );
    // assert
    assert.deepEqual(mine.map((x) => [x.key, x.count, x.at, x.lastAt]), [['default/m', 2, 5000, 6000]]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--table only applies with --aws/);
  });
});
