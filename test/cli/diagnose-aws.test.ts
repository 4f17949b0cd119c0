/**
 * `trace` and `diagnose` with `--aws`, as an operator of the AWS deployment runs them: the real CLI
 * in a child process reading SQS (fauxqs on 127.0.0.1, found by prefix), the DynamoDB state table
 * (DynamoDB Local) and the cluster (the sandbox, by --kubeconfig). The queue and table hold what a
 * deployed function would have left: a dead-lettered VMI key, its pod expectation and its traces.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { ensureTable, openDynamoDbState } from '../../shared/state/dynamodb-state.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { vmiManifest } from '../e2e/support.ts';
import { keyMessage } from '../queue/conformance.ts';
import { startLocalSqs, type LocalSqs } from '../queue/fauxqs.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { projectRoot } from '../support/reference.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['cli/main.ts', ...args], { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, KUBECONFIG: '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const prefix = `diag${process.pid}`;
const table = `diag-state-${process.pid}`;
let sqs: LocalSqs;
let ddb: DynamoDbLocal;
let sandbox: Sandbox;
let env: NodeJS.ProcessEnv;

before(async () => {
  [sqs, ddb, sandbox] = await Promise.all([startLocalSqs(), startDynamoDbLocal(), startSandbox({ nodes: 1 })]);
  // The VMI exists; no controller runs, so it never gets a launcher pod.
  await createKubeClient(sandbox.apiServer.kubeConfig('test')).create(VMIS, vmiManifest('poison'));
  const q = new SqsKeyQueue({ client: sqs.client(), prefix, retry: { baseDelayMs: 10, maxDelayMs: 10, maxAttempts: 5, deadLetterAfterMs: 60_000 } });
  await q.ensureQueues();
  await q.send([keyMessage('default/poison', 1)]);
  const [m] = await q.receive('vmi', 1, 2000);
  await q.deadLetter('vmi', m!.receipt, { reason: 'ServerError', message: 'get virtualmachineinstances default/poison: injected fault' });
  await q.close();
  const client = ddb.client();
  await ensureTable(client, table);
  const state = openDynamoDbState({ tableName: table, client });
  const now = Date.now();
  const entry: TraceEntry = {
    controller: 'vmi',
    key: 'default/poison',
    cause: { kind: 'VirtualMachineInstance', namespace: 'default', name: 'poison', resourceVersion: '1', event: 'ADDED', seenAt: now - 2000 },
    enqueuedAt: now - 1900,
    receivedAt: now - 1800,
    attempt: 5,
    coalesced: 1,
    outcome: { kind: 'dead-lettered', reason: 'ServerError', message: 'injected fault' },
    reads: 1,
    writes: [],
    durationMs: 12,
  } as TraceEntry;
  await state.traces.record(entry, now);
  await state.close?.();
  env = {
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
});
after(async () => {
  await Promise.all([sqs?.stop(), ddb?.stop(), sandbox?.stop()]);
});

describe('trace and diagnose --aws (fauxqs, DynamoDB Local, the sandbox)', () => {
  test('diagnose --aws: the dead letter in SQS is the verdict, exit 1', async () => {
    // act
    const r = await cli(['diagnose', 'vmi/default/poison', '--aws', '--prefix', prefix, '--table', table, '--kubeconfig', sandbox.kubeconfigPath], env);
    // assert
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /^no launcher pod: the key vmi default\/poison is dead-lettered \(ServerError, 1 attempt, \d+ s ago\)$/, r.stdout);
    assert.match(r.stdout, /→ fix the cause, then: virt-reconciler replay --controller vmi --key default\/poison/);
    assert.match(r.stdout, new RegExp(`read SQS, prefix ${prefix}.*, table ${table} and the cluster`), r.stdout);
  });

  test('trace --aws --json: the entry recorded in DynamoDB', async () => {
    // act
    const r = await cli(['trace', 'vmi/default/poison', '--aws', '--prefix', prefix, '--table', table, '--kubeconfig', sandbox.kubeconfigPath, '--json'], env);
    // assert
    assert.equal(r.code, 0, r.stderr);
    const t = JSON.parse(r.stdout) as { entries: TraceEntry[] };
    assert.equal(t.entries.length, 1);
    assert.equal(t.entries[0]!.outcome.kind, 'dead-lettered');
  });

  test('diagnose --aws without a table: one line, exit 2', async () => {
    // act
    const r = await cli(['diagnose', 'vmi/default/poison', '--aws', '--prefix', prefix], { ...env, STATE_TABLE_NAME: '' });
    // assert
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^virt-reconciler diagnose: --aws needs the state table: pass --table NAME or set STATE_TABLE_NAME\n$/);
  });
});
