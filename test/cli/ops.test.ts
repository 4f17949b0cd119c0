/**
 * The operations commands (`queues`, `dlq list`, `replay`) as an operator runs them: the real CLI
 * in a child process, against a real SQLite queue file holding keys in every state, and against
 * SQS (fauxqs on 127.0.0.1) with the same states.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CONTROLLERS } from '../../shared/controllers.ts';
import type { Controller } from '../../shared/queue/message.ts';
import type { DeadLetter, KeyQueue, QueueDepth } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { keyMessage } from '../queue/conformance.ts';
import { startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { projectRoot } from '../support/reference.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI in a child process. Async, so an in-process fauxqs keeps answering meanwhile. */
function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/virt-reconciler.js', ...args],
      { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Receives exactly one key of `c` (the only one visible), or fails the test. */
async function one(q: KeyQueue, c: Controller): Promise<string> {
  const got = await q.receive(c, 1, 2000);
  assert.equal(got.length, 1, `expected one ${c} key to receive`);
  return got[0]!.receipt;
}

/**
 * Keys in every state, one at a time so each lands where intended:
 * vmi: 2 visible, 1 in flight, 1 retrying (backoff), 1 requeue-after timer, 1 dead-lettered
 * (PoisonKey, 1 attempt) + 1 malformed message; vm: 1 visible; migration: 1 dead-lettered.
 */
async function populate(q: KeyQueue & { sendRaw(c: Controller, body: string): Promise<void> }): Promise<void> {
  await q.send([keyMessage('ns/flight', 1)]);
  await one(q, 'vmi'); // held, never settled
  await q.send([keyMessage('ns/retry', 1)]);
  await q.retryLater('vmi', await one(q, 'vmi'), { reason: 'Conflict', message: 'the object has been modified' });
  await q.send([keyMessage('ns/timer', 1)]);
  await q.requeueAfter('vmi', await one(q, 'vmi'), 3600);
  await q.send([keyMessage('ns/poison', 1)]);
  await q.deadLetter('vmi', await one(q, 'vmi'), { reason: 'PoisonKey', message: 'reconcile cannot ever succeed' });
  await q.sendRaw('vmi', '{"v":1,"controller":"vmi","key":"NOT A KEY"');
  assert.deepEqual(await q.receive('vmi', 1, 300), [], 'the malformed message is dead-lettered on receive, never returned');
  await q.send([keyMessage('ns/mig1', 1, 'ADDED', 'migration')]);
  await q.deadLetter('migration', await one(q, 'migration'), { reason: 'MigrationTargetFailed', message: 'target pod failed' });
  await q.send([keyMessage('ns/visible1', 1), keyMessage('ns/visible2', 1), keyMessage('ns/vm1', 1, 'ADDED', 'vm')]);
}

function parseJson<T>(r: Run): T {
  assert.equal(r.code, 0, `exit code; stderr: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

const work = mkdtempSync(join(tmpdir(), 'ops-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));
let files = 0;

/** A fresh queue file with {@link populate}'s keys; the test process closes it before the CLI runs. */
async function fixtureDb(): Promise<string> {
  const file = join(work, `q${files++}.db`);
  // A long first backoff, so the retrying key is still delayed when the CLI looks.
  const q = new SqliteKeyQueue({ db: file, retry: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, maxAttempts: 5, deadLetterAfterMs: 3_600_000 } });
  await populate(q);
  await q.close();
  return file;
}

describe('embedded queue (--db)', () => {
  test('queues --json: every state counted per controller', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const out = parseJson<{ backend: string; queues: QueueDepth[] }>(await cli(['queues', '--db', db, '--json']));
    // assert
    assert.equal(out.backend, 'sqlite');
    const by = Object.fromEntries(out.queues.map((d) => [d.controller, d]));
    assert.deepEqual(
      { visible: by.vmi?.visible, inFlight: by.vmi?.inFlight, delayed: by.vmi?.delayed, deadLettered: by.vmi?.deadLettered },
      { visible: 2, inFlight: 1, delayed: 2, deadLettered: 2 },
      'vmi: 2 visible, 1 held, retry + timer delayed, poison + malformed dead',
    );
    assert.deepEqual([by.vm?.visible, by.vm?.deadLettered, by.migration?.visible, by.migration?.deadLettered], [1, 0, 0, 1]);
    assert.ok((by.vmi?.oldestAgeSeconds ?? -1) >= 0, 'the age of the oldest key is known on SQLite');
  });

  test('queues: a table with one row per controller', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const r = await cli(['queues', '--db', db]);
    // assert
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /CONTROLLER\s+VISIBLE\s+IN FLIGHT\s+DELAYED\s+DEAD-LETTERED\s+OLDEST/);
    assert.match(r.stdout, /^vmi\s+2\s+1\s+2\s+2\s+\d/m, 'the vmi row');
    assert.match(r.stdout, /^vm\s+1\s+0\s+0\s+0\s/m, 'the vm row');
    assert.match(r.stdout, /^migration\s+0\s+0\s+0\s+1\s/m, 'the migration row');
  });

  test('dlq list: reason, attempts, first and last failure; --controller filters', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const all = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--json']));
    const mig = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--json', '--controller', 'migration']));
    const table = await cli(['dlq', 'list', '--db', db]);
    // assert
    const byKey = Object.fromEntries(all.map((d) => [`${d.controller}:${d.key}`, d]));
    assert.deepEqual(Object.keys(byKey).sort(), ['migration:ns/mig1', 'vmi:', 'vmi:ns/poison']);
    assert.equal(byKey['vmi:ns/poison']?.reason, 'PoisonKey');
    assert.equal(byKey['vmi:ns/poison']?.attempts, 1);
    assert.equal(byKey['vmi:']?.reason, 'MalformedMessage');
    for (const d of all) assert.ok(d.firstFailureAt > 0 && d.firstFailureAt <= d.lastFailureAt, `failure times of ${d.key}`);
    assert.deepEqual(mig.map((d) => d.key), ['ns/mig1']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^vmi\s+ns\/poison\s+PoisonKey\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d{4}-/m);
    assert.match(table.stdout, /\(malformed\)\s+MalformedMessage/);
  });

  test('replay refuses to run without --key or --all', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const r = await cli(['replay', '--db', db]);
    // assert
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "virt-reconciler replay: say what to replay: --key ns/name or --all\n");
    assert.equal(parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--json'])).length, 3, 'nothing moved');
  });

  test('replay --all --dry-run reports moves and skips, moves nothing', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const r = parseJson<{ moved: { key: string }[]; skipped: { key: string; why: string }[]; dryRun: boolean }>(await cli(['replay', '--db', db, '--all', '--dry-run', '--json']));
    // assert
    assert.deepEqual(r.moved.map((m) => m.key).sort(), ['ns/mig1', 'ns/poison']);
    assert.equal(r.skipped.length, 1, 'the malformed dead letter cannot be replayed');
    assert.match(r.skipped[0]!.why, /not JSON/);
    assert.equal(r.dryRun, true);
    assert.equal(parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--json'])).length, 3, 'a dry run moves nothing');
  });

  test('replay --key moves that key back to its queue; a second replay does no harm', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const first = await cli(['replay', '--db', db, '--key', 'ns/poison']);
    const second = await cli(['replay', '--db', db, '--key', 'ns/poison']);
    const left = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--json']));
    const depth = parseJson<{ queues: QueueDepth[] }>(await cli(['queues', '--db', db, '--json']));
    // assert
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /replayed 1 key\(s\)/);
    assert.match(first.stdout, /^vmi\s+ns\/poison$/m);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /nothing to replay \(no dead letter for ns\/poison\)/);
    assert.deepEqual(left.map((d) => d.key).sort(), ['', 'ns/mig1'], 'only the poison key left the DLQ');
    const vmi = depth.queues.find((d) => d.controller === 'vmi');
    assert.deepEqual([vmi?.visible, vmi?.deadLettered], [3, 1], 'the replayed key waits once, beside the 2 visible ones');
  });

  test('cluster-scoped keys (a node name): queued, dead-lettered, listed and replayed by name; the wrong form refused', async () => {
    // arrange: node01 dead-lettered on the node queue, node02 waiting on the evacuation queue
    const db = join(work, `q${files++}.db`);
    const q = new SqliteKeyQueue({ db });
    const nodeKey = (name: string, controller: Controller) => ({ ...keyMessage(name, 7, 'MODIFIED', controller), cause: { kind: 'Node', namespace: '', name, uid: `uid-${name}`, resourceVersion: '7', event: 'MODIFIED', seenAt: 1_000 } });
    await q.send([nodeKey('node01', 'node')]);
    await q.deadLetter('node', await one(q, 'node'), { reason: 'FailedPatchNode', message: 'failed to mark node node01 as unschedulable' });
    await q.send([nodeKey('node02', 'evacuation')]);
    await q.close();
    // act
    const listed = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--db', db, '--controller', 'node', '--json']));
    const depth = parseJson<{ queues: QueueDepth[] }>(await cli(['queues', '--db', db, '--json']));
    const wrongForm = await cli(['replay', '--db', db, '--controller', 'node', '--key', 'default/node01']);
    const replayed = await cli(['replay', '--db', db, '--controller', 'node', '--key', 'node01']);
    const after = parseJson<{ queues: QueueDepth[] }>(await cli(['queues', '--db', db, '--json']));
    // assert
    assert.deepEqual(listed.map((d) => [d.controller, d.key, d.reason]), [['node', 'node01', 'FailedPatchNode']]);
    assert.equal(depth.queues.find((d) => d.controller === 'evacuation')?.visible, 1);
    assert.equal(wrongForm.code, 2);
    assert.match(wrongForm.stderr, /--key must be a name \(lower-case DNS names\), got 'default\/node01'/);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /^node\s+node01$/m);
    const node = after.queues.find((d) => d.controller === 'node');
    assert.deepEqual([node?.visible, node?.deadLettered], [1, 0], 'node01 is back on the node queue');
  });

  test('replay --all --controller --max: only that controller, at most N, skipped ones reported', async () => {
    // arrange
    const db = await fixtureDb();
    // act
    const mig = await cli(['replay', '--db', db, '--all', '--controller', 'migration', '--max', '5']);
    const rest = await cli(['replay', '--db', db, '--all']);
    // assert
    assert.equal(mig.code, 0, mig.stderr);
    assert.match(mig.stdout, /replayed 1 key\(s\)/);
    assert.match(mig.stdout, /^migration\s+ns\/mig1$/m);
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(rest.stdout, /replayed 1 key\(s\)[\s\S]*ns\/poison[\s\S]*skipped 1 \(left in the DLQ\)[\s\S]*\(malformed\)\s+body: not JSON/);
  });

  test('queues --watch redraws until interrupted, then exits 0', async () => {
    // arrange
    const db = await fixtureDb();
    const child = spawn(process.execPath, ['bin/virt-reconciler.js', 'queues', '--db', db, '--watch'], { cwd: projectRoot });
    let out = '';
    // act: wait for the second table (the first refresh), bounded by the test timeout
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if ((out.match(/^CONTROLLER/gm) ?? []).length >= 2) resolve();
      });
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    // assert
    assert.equal(code, 0, 'Ctrl-C ends the watch cleanly');
    assert.ok((out.match(/^vmi\s+2\s+1\s+2\s+2/gm) ?? []).length >= 2, out);
  });

  const badFlags: { args: string[]; stderr: RegExp; code: number }[] = [
    { args: ['queues', '--frobnicate'], stderr: /^virt-reconciler queues: unknown flag '--frobnicate'\n$/, code: 2 },
    { args: ['queues', '--db'], stderr: /^virt-reconciler queues: .*--db.*\n$/, code: 2 },
    { args: ['dlq', 'list', '--controller', 'pods'], stderr: new RegExp(`^virt-reconciler dlq: --controller must be one of ${CONTROLLERS.join(', ')}, got 'pods'\n$`), code: 2 },
    { args: ['dlq'], stderr: /^virt-reconciler dlq: missing subcommand: 'dlq list'\n$/, code: 2 },
    { args: ['dlq', 'purge'], stderr: /^virt-reconciler dlq: unknown subcommand 'purge'/, code: 2 },
    { args: ['replay', '--all', '--max', '0'], stderr: /^virt-reconciler replay: --max takes a whole number >= 1, got '0'\n$/, code: 2 },
    { args: ['replay', '--key', 'NoSlash'], stderr: /^virt-reconciler replay: --key must be namespace\/name/, code: 2 },
    { args: ['replay', '--key', 'ns/a', '--all'], stderr: /^virt-reconciler replay: --key and --all exclude each other\n$/, code: 2 },
    { args: ['queues', '--aws', '--db', 'x.db'], stderr: /^virt-reconciler queues: --db and --aws name two different queues: pass one\n$/, code: 2 },
    { args: ['queues', '--prefix', 'p'], stderr: /^virt-reconciler queues: --prefix only applies with --aws\n$/, code: 2 },
  ];
  for (const c of badFlags) {
    test(`bad input: ${c.args.join(' ')} → one line, exit ${c.code}`, async () => {
      // act
      const r = await cli(c.args);
      // assert
      assert.equal(r.code, c.code, r.stderr);
      assert.match(r.stderr, c.stderr);
      assert.equal(r.stdout, '');
    });
  }

  test('a missing database file is named in the error, exit 1, and is not created', async () => {
    // arrange
    const missing = join(work, 'nope', 'virt-reconciler.db');
    // act
    const r = await cli(['dlq', 'list', '--db', missing]);
    // assert
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `virt-reconciler dlq: no queue database at ${missing} (start 'virt-reconciler up' first, or pass --db FILE or --aws)\n`);
    assert.equal(existsSync(missing), false, 'no empty database was created');
  });
});

describe('AWS queues (--aws, fauxqs)', () => {
  let sqs: LocalSqs;
  let env: NodeJS.ProcessEnv;
  const prefix = `ops${process.pid}`;

  before(async () => {
    sqs = await startLocalSqs();
    const q = new SqsKeyQueue({ client: sqs.client(), prefix, retry: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, maxAttempts: 5, deadLetterAfterMs: 3_600_000 } });
    await q.ensureQueues();
    await populate(q);
    await q.close();
    // Only what an operator's shell would have: endpoint, region, credentials. No queue URLs:
    // the CLI looks them up by prefix.
    env = { AWS_ENDPOINT_URL_SQS: sqs.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
  });
  after(() => sqs.stop());

  test('queues --aws --json: SQS counts per controller, age unknown', async () => {
    // act
    const out = parseJson<{ backend: string; queues: (QueueDepth & { oldestAgeSeconds: number | null })[] }>(await cli(['queues', '--aws', '--prefix', prefix, '--json'], env));
    // assert
    assert.equal(out.backend, 'sqs');
    const vmi = out.queues.find((d) => d.controller === 'vmi');
    // On SQS a key in backoff is in flight (its visibility was extended); the timer queue is "delayed".
    assert.deepEqual([vmi?.visible, vmi?.inFlight, vmi?.delayed, vmi?.deadLettered], [2, 2, 1, 2]);
    assert.equal(vmi?.oldestAgeSeconds, null);
    const mig = out.queues.find((d) => d.controller === 'migration');
    assert.equal(mig?.deadLettered, 1);
  });

  test('dlq list --aws, replay --key twice, dlq list again', async () => {
    // act
    const before = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--aws', '--prefix', prefix, '--json'], env));
    const refused = await cli(['replay', '--aws', '--prefix', prefix], env);
    const first = await cli(['replay', '--aws', '--prefix', prefix, '--key', 'ns/poison'], env);
    const second = await cli(['replay', '--aws', '--prefix', prefix, '--key', 'ns/poison'], env);
    const afterReplay = parseJson<DeadLetter[]>(await cli(['dlq', 'list', '--aws', '--prefix', prefix, '--json'], env));
    // assert
    const poison = before.find((d) => d.key === 'ns/poison');
    assert.equal(poison?.reason, 'PoisonKey');
    assert.equal(poison?.message, 'reconcile cannot ever succeed');
    assert.ok(before.some((d) => d.key === '' && d.reason === 'MalformedMessage'), 'the malformed message is listed');
    assert.equal(before.length, 3);
    assert.equal(refused.code, 2);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /replayed 1 key\(s\)[\s\S]*ns\/poison/);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /nothing to replay/);
    assert.deepEqual(afterReplay.map((d) => d.key).sort(), ['', 'ns/mig1']);
  });

  test('an unreachable or missing queue is one line, exit 1', async () => {
    // act
    const r = await cli(['queues', '--aws', '--prefix', 'no-such-prefix'], env);
    // assert
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^virt-reconciler queues: SQS, prefix no-such-prefix.*: .+\n$/);
    assert.doesNotMatch(r.stderr, /\n.+/, 'one line');
  });
});
