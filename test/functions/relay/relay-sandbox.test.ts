/**
 * The relay against the sandbox API server, over a real SqliteKeyQueue: events become keys;
 * dropped watches, 410 Gone and failing lists lose nothing (relist re-sends); two replicas leave
 * each key in the queue once; the HTTP endpoints answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Relay } from '../../../functions/relay/relay.ts';
import { readiness, startRelayServer, type RelayStatus } from '../../../functions/relay/server.ts';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { Controller } from '../../../shared/queue/message.ts';
import { SqliteKeyQueue } from '../../../shared/queue/sqlite-queue.ts';
import { MIGRATIONS, PODS, VMIS } from '../../../shared/api/resources.ts';

const NS = 'default';
const RELAY = 'relay';
let api: ApiServer;
let kube: KubeClient;

before(async () => {
  api = await startApiServer();
  kube = createKubeClient(api.kubeConfig('test'));
});
after(async () => {
  await api.close();
});

function vmi(name: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } } },
  } as VirtualMachineInstance;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, tries = 1000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for: ${what}`);
}

/** Every key waiting on `controller`'s queue (received and acked), with how many messages each coalesced. */
async function drain(q: SqliteKeyQueue, controller: Controller): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (;;) {
    const got = await q.receive(controller, 100, 0);
    if (got.length === 0) return out;
    for (const rk of got) {
      out.set(rk.message.key, (out.get(rk.message.key) ?? 0) + rk.coalesced);
      await q.ack(controller, rk.receipt);
    }
  }
}

/** Keys collected across drains (a key may legitimately arrive more than once over time). */
class Collector {
  readonly seen = new Set<string>();
  readonly q: SqliteKeyQueue;
  constructor(q: SqliteKeyQueue) {
    this.q = q;
  }
  async collect(controller: Controller): Promise<Set<string>> {
    for (const k of (await drain(this.q, controller)).keys()) this.seen.add(k);
    return this.seen;
  }
  async waitFor(controller: Controller, keys: readonly string[], what: string): Promise<void> {
    await until(what, async () => {
      const s = await this.collect(controller);
      return keys.every((k) => s.has(k));
    });
  }
}

function newRelay(q: SqliteKeyQueue, metrics = new MetricsRegistry()): Relay {
  return new Relay({ kubeConfig: api.kubeConfig(RELAY), queue: q, log: silentLogger, metrics });
}

async function startedRelay(q: SqliteKeyQueue): Promise<Relay> {
  const relay = newRelay(q);
  relay.start();
  await until('relay ready', () => relay.ready);
  return relay;
}

describe('relay against the sandbox API server', () => {
  test('a VMI and its launcher pod become vmi and vm keys on the queue', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const relay = await startedRelay(q);
    const c = new Collector(q);
    // act
    const created = await kube.create(VMIS, vmi('keys-a'));
    await kube.create(PODS, {
      metadata: { namespace: NS, name: 'virt-launcher-keys-b', labels: { 'kubevirt.io': 'virt-launcher' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'keys-b', uid: 'b-uid', controller: true }] },
      spec: { containers: [{ name: 'compute', image: 'x' }] },
    });
    // assert
    await c.waitFor('vmi', [`${NS}/keys-a`, `${NS}/keys-b`], 'vmi keys of the VMI and of the pod');
    await c.waitFor('vm', [`${NS}/keys-a`], 'vm key of the VMI');
    assert.ok(created.metadata?.uid);
    await relay.stop();
    await q.close();
  });

  test('watches dropped during a burst of changes → every key still arrives', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const relay = await startedRelay(q);
    const c = new Collector(q);
    const names = Array.from({ length: 30 }, (_, i) => `drop-${i}`);
    // act
    for (const [i, n] of names.entries()) {
      await kube.create(VMIS, vmi(n));
      if (i % 5 === 0) api.faults.dropWatches();
    }
    // assert
    await c.waitFor('vmi', names.map((n) => `${NS}/${n}`), 'all 30 VMI keys after dropped watches');
    assert.ok(relay.metrics.total('relay_watch_restarts_total', { why: 'rewatch' }) > 0, 'no re-watch happened: the fault did not bite');
    await relay.stop();
    await q.close();
  });

  test('410 Gone (history compacted while the watch was down) → relist re-sends, nothing missed', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const relay = await startedRelay(q);
    const c = new Collector(q);
    const names = Array.from({ length: 20 }, (_, i) => `gone-${i}`);
    const relists = relay.metrics.total('relay_watch_restarts_total', { why: 'relist' });
    // act: changes land, history is compacted and watches dropped, so the re-watch meets 410
    for (const [i, n] of names.entries()) {
      await kube.create(VMIS, vmi(n));
      if (i % 7 === 3) {
        api.control.compactHistory();
        api.faults.dropWatches();
      }
    }
    // and a 410 answered to the next watch request itself
    api.faults.failNext(410, 1, { verb: 'watch', identity: RELAY, resource: 'virtualmachineinstances' });
    api.faults.dropWatches();
    await kube.create(VMIS, vmi('gone-last'));
    // assert
    await c.waitFor('vmi', [...names, 'gone-last'].map((n) => `${NS}/${n}`), 'all VMI keys after 410s');
    assert.ok(relay.metrics.total('relay_watch_restarts_total', { why: 'relist' }) > relists, 'no relist happened: the 410 did not bite');
    await relay.stop();
    await q.close();
  });

  test('list failures (500) at start → the relay keeps trying, becomes ready and sends the keys', async () => {
    // arrange
    await kube.create(VMIS, vmi('listfail-a'));
    const q = new SqliteKeyQueue({ db: ':memory:' });
    api.faults.failNext(500, 6, { verb: 'list', identity: RELAY });
    const relay = newRelay(q);
    const c = new Collector(q);
    // act
    relay.start();
    await until('relay ready', () => relay.ready);
    // assert
    await c.waitFor('vmi', [`${NS}/listfail-a`], 'the VMI key after failed lists');
    assert.equal(api.faults.remaining(), 0, 'the injected list failures were not all consumed');
    assert.ok(relay.metrics.total('relay_watch_restarts_total', { why: 'error' }) >= 6);
    await relay.stop();
    await q.close();
  });

  test('two relay replicas at once → the queue holds each key once (their duplicates are dropped)', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const [r1, r2] = [await startedRelay(q), await startedRelay(q)];
    await drain(q, 'vmi'); // the initial lists' keys (each replica's RELIST carries the same dedup id)
    const names = Array.from({ length: 10 }, (_, i) => `twin-${i}`);
    // act
    for (const n of names) await kube.create(VMIS, vmi(n));
    await until('both replicas sent', () => r1.pending === 0 && r2.pending === 0 && r1.metrics.total('workqueue_adds_total', { name: 'vmi' }) >= 10 && r2.metrics.total('workqueue_adds_total', { name: 'vmi' }) >= 10);
    await sleep(100);
    await until('both replicas flushed', () => r1.pending === 0 && r2.pending === 0);
    const got = await drain(q, 'vmi');
    // assert
    for (const n of names) assert.equal(got.get(`${NS}/${n}`), 1, `${n}: ${got.get(`${NS}/${n}`)} messages held for the key (want exactly 1)`);
    await Promise.all([r1.stop(), r2.stop()]);
    await q.close();
  });

  test('HTTP: /healthz answers, /readyz says why it is not ready, /metrics has client-go names', async () => {
    // arrange: lists keep failing, so the relay cannot become ready
    const q = new SqliteKeyQueue({ db: ':memory:' });
    api.faults.failNext(500, 1000, { verb: 'list', identity: RELAY, resource: 'pods' });
    const relay = newRelay(q);
    const server = await startRelayServer({ relay });
    relay.start();
    try {
      // act
      await until('the other kinds synced', () => relay.unsynced().length === 1);
      const health = await fetch(`${server.url}/healthz`);
      const notReady = await fetch(`${server.url}/readyz`);
      const notReadyText = await notReady.text();
      api.faults.clear();
      await until('relay ready', () => relay.ready);
      const ready = await fetch(`${server.url}/readyz`);
      await kube.create(VMIS, vmi('http-a'));
      await until('sent', () => relay.metrics.total('workqueue_adds_total', { name: 'vmi' }) > 0);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const missing = await fetch(`${server.url}/nope`);
      // assert
      assert.equal(health.status, 200);
      assert.equal(notReady.status, 503);
      assert.match(notReadyText, /initial list not complete for: Pod/);
      assert.equal(ready.status, 200);
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(metrics, /^# TYPE workqueue_adds_total counter$/m);
      assert.match(metrics, /^workqueue_adds_total\{name="vmi"\} \d+$/m);
      assert.match(metrics, /^relay_watch_restarts_total\{kind="Pod",why="error"\} \d+$/m);
      assert.match(metrics, /^relay_outbox_depth \d+$/m);
      assert.match(metrics, /^relay_watched_objects \d+$/m);
      assert.equal(missing.status, 404);
    } finally {
      api.faults.clear();
      await relay.stop();
      await server.close();
      await q.close();
    }
  });
});

describe('readiness', () => {
  const status = (unsynced: string[], pending: number, failingSince: number | undefined): RelayStatus => ({
    metrics: new MetricsRegistry(),
    watchedObjects: 0,
    unsynced: () => unsynced as never,
    outboxHealth: () => ({ pending, failures: failingSince === undefined ? 0 : 3, failingSince }),
  });
  const CASES = [
    { name: 'synced, nothing pending', s: status([], 0, undefined), ready: true },
    { name: 'a kind not listed yet', s: status(['Pod', 'KubeVirt'], 0, undefined), ready: false, reason: /Pod, KubeVirt/ },
    { name: 'sends failing briefly', s: status([], 5, 990_000), ready: true },
    { name: 'sends failing past the threshold with keys waiting', s: status([], 5, 900_000), ready: false, reason: /outbox stuck: 5 keys unsent.*100s/ },
    { name: 'sends failing but nothing waiting', s: status([], 0, 900_000), ready: true },
  ];
  for (const c of CASES) {
    test(c.name, () => {
      // act
      const r = readiness(c.s, 1_000_000, 60_000);
      // assert
      assert.equal(r.ready, c.ready, JSON.stringify(r));
      if (!r.ready && c.reason) assert.match(r.reason, c.reason);
    });
  }
});

describe('views: what a VMI key\'s message carries (shared/relay/view.ts)', () => {
  test('the VMI and its pods as the relay watched them when the key left; a view too large for a message is left out', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const metrics = new MetricsRegistry();
    // Streams count as current once open (view-store.test.ts covers the settling time).
    // What the relay sent, message by message: the queue coalesces a key's messages and may
    // deliver one without a view it cannot order (shared/queue/coalesce.ts), which is not this test's subject.
    const messages = new Map<string, import('../../../shared/queue/message.ts').KeyMessage>();
    const sender = {
      send: async (ms: readonly import('../../../shared/queue/message.ts').KeyMessage[]) => {
        for (const m of ms) if (m.view?.reads.some((r) => r.resource === 'pods' && r.items.length === 1) || !messages.get(m.key)?.view) messages.set(m.key, m);
        await q.send(ms);
      },
    };
    const relay = new Relay({ kubeConfig: api.kubeConfig(RELAY), queue: sender, log: silentLogger, metrics, viewSettleMs: 0 });
    relay.start();
    await until('relay synced', () => relay.ready);
    const created = await kube.create(VMIS, vmi('viewed'));
    const uid = created.metadata?.uid ?? '';
    await kube.create(PODS, { metadata: { name: 'viewed-pod', namespace: NS, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': uid }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'viewed', uid, controller: true }] }, spec: { containers: [{ name: 'compute', image: 'i' }] } });
    // act
    // A key sent before every viewed resource's watch stream is open goes without its view (the
    // relay cannot tell it current yet: view-store.ts); on a loaded real control plane the streams
    // can open after the relay reports itself synced, so the VMI is touched once a second until one goes.
    let nudges = 0;
    let lastNudge = Date.now();
    await until('the VMI sent with its pod in its view', async () => {
      const done = messages.get(`${NS}/viewed`)?.view?.reads.some((r) => r.resource === 'pods' && r.items.length === 1) === true;
      if (!done && Date.now() - lastNudge > 1000) {
        lastNudge = Date.now();
        await kube.patch(VMIS, NS, 'viewed', { type: 'merge', body: { metadata: { annotations: { nudge: String(++nudges) } } } });
      }
      return done;
    }, 3000);
    // The watches are current now (a view went out): a VMI too large to carry is left out for its size.
    const big = await kube.create(VMIS, { ...vmi('too-big'), metadata: { name: 'too-big', namespace: NS, annotations: { filler: 'x'.repeat(60 * 1024) } } });
    await until('the large VMI sent', () => messages.has(`${NS}/too-big`));
    await relay.stop();
    // assert
    const view = messages.get(`${NS}/viewed`)!.view!;
    const vmiRead = view.reads.find((r) => r.name === 'viewed');
    assert.equal((vmiRead?.items[0] as VirtualMachineInstance).metadata?.uid, uid, 'the VMI itself');
    const pods = view.reads.find((r) => r.resource === 'pods');
    assert.equal(pods?.labelSelector, `kubevirt.io,kubevirt.io/created-by=${uid}`, 'the exact read the reconcile makes');
    assert.ok((view.taken?.seq ?? 0) > 0 && typeof view.taken?.relay === 'string', `the view says when the relay took it: ${JSON.stringify(view.taken)}`);
    // Unscheduled: the render's automatic-limits read, the namespace's quotas (none), an answer as KubeVirt's informer's is.
    const quotas = view.reads.find((r) => r.resource === 'resourcequotas');
    assert.deepEqual(quotas && { items: quotas.items, labelSelector: quotas.labelSelector, trustEmptyWith: quotas.trustEmptyWith }, { items: [], labelSelector: undefined, trustEmptyWith: `virtualmachineinstances.kubevirt.io/${NS}/viewed` });
    assert.equal(messages.get(`${NS}/too-big`)?.view, undefined, `a ${big.metadata?.annotations?.filler?.length}-byte annotation: no view`);
    assert.ok(metrics.render().includes('relay_views_too_large_total'), 'and the relay counts it');
    await q.close();
  });
  test('a migration key\'s message carries the migration, its VMI and the VMI\'s pods', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const sent: import('../../../shared/queue/message.ts').KeyMessage[] = [];
    const sender = {
      send: async (ms: readonly import('../../../shared/queue/message.ts').KeyMessage[]) => {
        sent.push(...ms);
        await q.send(ms);
      },
    };
    const relay = new Relay({ kubeConfig: api.kubeConfig(RELAY), queue: sender, log: silentLogger, metrics: new MetricsRegistry(), viewSettleMs: 0 });
    relay.start();
    await until('relay synced', () => relay.ready);
    const source = await kube.create(VMIS, vmi('migrating'));
    const uid = source.metadata?.uid ?? '';
    await kube.create(PODS, { metadata: { name: 'migrating-pod', namespace: NS, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': uid }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'migrating', uid, controller: true }] }, spec: { containers: [{ name: 'compute', image: 'i' }] } });
    await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'move-it', namespace: NS }, spec: { vmiName: 'migrating' } });
    // act: as above, the migration is touched until a message goes with a whole view
    const whole = () => sent.find((m) => m.controller === 'migration' && m.key === `${NS}/move-it` && m.view?.reads.length === 3 && m.view.reads.every((r) => r.items.length === 1));
    let nudges = 0;
    let lastNudge = Date.now();
    await until('the migration sent with its view', async () => {
      if (!whole() && Date.now() - lastNudge > 1000) {
        lastNudge = Date.now();
        await kube.patch(MIGRATIONS, NS, 'move-it', { type: 'merge', body: { metadata: { annotations: { nudge: String(++nudges) } } } });
      }
      return whole() !== undefined;
    }, 3000);
    await relay.stop();
    // assert: the reads reconcile.ts makes first, each answered
    const reads = whole()!.view!.reads;
    assert.deepEqual(reads.map((r) => [r.resource, r.name, r.labelSelector]), [
      ['virtualmachineinstancemigrations.kubevirt.io', 'move-it', undefined],
      ['virtualmachineinstances.kubevirt.io', 'migrating', undefined],
      ['pods', undefined, `kubevirt.io,kubevirt.io/created-by=${uid}`],
    ]);
    assert.equal((reads[2]!.items[0] as { metadata?: { name?: string } }).metadata?.name, 'migrating-pod');
    await q.close();
  });
});
