/**
 * The relay's container entry as a process: `node functions/relay/main.ts` with a kubeconfig
 * (the sandbox API server), queue URLs from the environment (fauxqs, a local SQS), PORT and
 * CLUSTER_ID; keys reach SQS, the probes answer, SIGTERM flushes and exits 0. In shadow mode it
 * judges the functions' decisions from the shadow queue and writes divergences to DynamoDB Local.
 */
import { CONTROLLERS } from '../../../shared/controllers.ts';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CreateQueueCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { queueNames, SqsKeyQueue } from '../../../shared/queue/sqs-queue.ts';
import { startLocalSqs, type LocalSqs } from '../../queue/fauxqs.ts';
import { VMIS } from '../../../shared/api/resources.ts';
import { DynamoDbDivergences } from '../../../shared/cutover/divergence-store.ts';
import { channelHooks, SqsShadowChannel } from '../../../shared/cutover/shadow-channel.ts';
import type { ShadowWrite } from '../../../shared/kube/guarded-writes.ts';
import type { Logger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import { ensureTable } from '../../../shared/state/dynamodb-state.ts';
import { startDynamoDbLocal } from '../../support/dynamodb-local.ts';

/** `node functions/relay/main.ts` with ports 0, fauxqs and test credentials, plus `env`; its stderr lines into `lines`. */
function spawnRelay(env: NodeJS.ProcessEnv, lines: string[]): ChildProcess {
  const c = spawn(process.execPath, ['functions/relay/main.ts'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', METRICS_PORT: '0', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_ENDPOINT_URL_SQS: sqs.endpoint, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  c.stderr!.setEncoding('utf8').on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
  return c;
}

/** The relay's first listen URL, from its "relay started" log line (fails naming the log if none comes). */
async function startedUrl(lines: readonly string[]): Promise<string> {
  for (let i = 0; i < 1000; i++) {
    const url = lines.map((l) => JSON.parse(l) as { message?: string; listen?: string[] }).find((l) => l.message === 'relay started')?.listen?.[0];
    if (url) return url;
    await sleep(10);
  }
  assert.fail(`no "relay started" line:\n${lines.join('\n')}`);
}

let api: ApiServer;
let sqs: LocalSqs;
let child: ChildProcess | undefined;

before(async () => {
  api = await startApiServer();
  sqs = await startLocalSqs();
});
after(async () => {
  child?.kill('SIGKILL');
  await sqs.stop();
  await api.close();
});

test('main: keys to SQS with the cluster prefix, /readyz 200 once synced, SIGTERM → exit 0', async () => {
  // arrange
  const prefix = 'relay-main';
  const queue = new SqsKeyQueue({ client: sqs.client(), prefix });
  await queue.ensureQueues();
  const client = sqs.client();
  const urls = Object.fromEntries(
    await Promise.all(
      CONTROLLERS.map(async (c) => [`QUEUE_URL_${c.toUpperCase()}`, (await client.send(new GetQueueUrlCommand({ QueueName: queueNames(prefix, c).queue }))).QueueUrl ?? ''] as const),
    ),
  );
  const kubeconfig = await api.writeKubeconfig(join(await mkdtemp(join(tmpdir(), 'relay-main-')), 'kubeconfig'), 'relay');
  const lines: string[] = [];
  child = spawnRelay({ KUBECONFIG: kubeconfig, ...urls, QUEUE_PREFIX: prefix, CLUSTER_ID: 'c1' }, lines);
  const exited = once(child, 'exit');
  const url = await startedUrl(lines);
  // act
  let ready = 0;
  for (let i = 0; i < 500 && ready !== 200; i++) {
    ready = (await fetch(`${url}/readyz`)).status;
    if (ready !== 200) await sleep(10);
  }
  await createKubeClient(api.kubeConfig('test')).create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'from-main', namespace: 'default' },
    spec: { domain: { devices: {} } },
  } as VirtualMachineInstance);
  const keys = new Set<string>();
  for (let i = 0; i < 30 && !keys.has('c1:default/from-main'); i++) {
    for (const rk of await queue.receive('vmi', 10, 200)) {
      keys.add(rk.message.key);
      await queue.ack('vmi', rk.receipt);
    }
  }
  const health = (await fetch(`${url}/healthz`)).status;
  const metrics = await (await fetch(`${url}/metrics`)).text();
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  child = undefined;
  // assert
  assert.equal(ready, 200, 'never ready');
  assert.equal(health, 200);
  // KubeVirt's virt-controller metrics at the Deployment's /metrics (docs/operations.md, "KubeVirt's metrics").
  assert.match(metrics, /\nkubevirt_virt_controller_leading_status 1\n/, 'the relay leads once synced');
  assert.match(metrics, /\nkubevirt_virt_controller_ready_status 1\n/);
  assert.match(metrics, /\nkubevirt_vmi_info\{[^}]*name="from-main"[^}]*\} 1\n/, 'the VMI collector sees the new VMI');
  assert.ok(keys.has('c1:default/from-main'), `keys on SQS: ${[...keys].join(', ')}; log:\n${lines.slice(-5).join('\n')}`);
  assert.equal(code, 0, `exit code; log:\n${lines.slice(-5).join('\n')}`);
  assert.ok(lines.some((l) => l.includes('"relay stopped"')), 'no clean-stop log line');
});

test("main in shadow mode judges the functions' decisions from the shadow queue against its watch: an agreeing one counted, a diverging one in the state table", async () => {
  // arrange: DynamoDB Local, the shadow queue, a live VMI labelled a=b with no phase
  const ddb = await startDynamoDbLocal();
  try {
    const table = `relay-shadow-${process.pid}`;
    await ensureTable(ddb.client(), table);
    const client = sqs.client();
    const shadowUrl = (await client.send(new CreateQueueCommand({ QueueName: `relay-shadow-${process.pid}.fifo`, Attributes: { FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } }))).QueueUrl!;
    const prefix = 'relay-shadow';
    await new SqsKeyQueue({ client, prefix }).ensureQueues();
    const kubeconfig = await api.writeKubeconfig(join(await mkdtemp(join(tmpdir(), 'relay-shadow-')), 'kubeconfig'), 'relay');
    await createKubeClient(api.kubeConfig('test')).create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'sh', namespace: 'default', labels: { a: 'b' } }, spec: { domain: { devices: {} } } } as VirtualMachineInstance);
    const lines: string[] = [];
    child = spawnRelay(
      {
        KUBECONFIG: kubeconfig,
        QUEUE_PREFIX: prefix,
        AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
        VR_MODE: 'shadow',
        SHADOW_QUEUE_URL: shadowUrl,
        STATE_TABLE_NAME: table,
        SHADOW_WINDOW_SECONDS: '1',
        SHADOW_LATE_SECONDS: '2',
      },
      lines,
    );
    const exited = once(child, 'exit');
    const url = await startedUrl(lines);
    // act: what two functions' hooks send (shared/cutover/shadow-channel.ts)
    const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };
    const hooks = channelHooks(new SqsShadowChannel({ client, url: shadowUrl, log: quiet, metrics: new MetricsRegistry() }), quiet, new MetricsRegistry());
    const patch = (body: unknown): ShadowWrite => ({ verb: 'patch', method: 'patch', resource: VMIS, namespace: 'default', name: 'sh', body, patchType: 'merge', answer: { result: { metadata: { name: 'sh' } } } });
    await hooks.record('vmi', 'default/sh', patch({ metadata: { labels: { a: 'b' } } }));
    await hooks.record('vmi', 'default/sh', patch({ status: { phase: 'Scheduled' } }));
    const sink = new DynamoDbDivergences(ddb.client(), table);
    let stored: Awaited<ReturnType<DynamoDbDivergences['list']>> = [];
    for (let i = 0; i < 200 && stored.length === 0; i++) {
      stored = await sink.list();
      if (stored.length === 0) await sleep(100);
    }
    const metrics = await (await fetch(`${url}/metrics`)).text();
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    child = undefined;
    // assert
    assert.deepEqual(stored.map((d) => [d.key, d.write, d.fields.map((f) => f.path)]), [['default/sh', 'patch virtualmachineinstances', ['status.phase']]], lines.slice(-5).join('\n'));
    assert.match(metrics, /shadow_decisions_total\{[^}]*verdict="agreed"[^}]*\} 1/);
    assert.equal(code, 0);
  } finally {
    await ddb.stop();
  }
});
