/**
 * Sweeps (shared/reconcile/sweep.ts): the keys one sweep expands into, the validation of sweep
 * messages and of the schedule's timer body, the expansion through the shared reconcile path
 * (one LIST, one key per object, deduplicated per sweep) over the embedded queue, and the local
 * runtime's sweep timers.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SweepTimers } from '../../local/sweeps.ts';
import { NODES } from '../../shared/api/resources.ts';
import { controllerInfo, sweeps } from '../../shared/controllers.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { dedupId, parseKeyMessage, SWEEP_KEY, type Controller, type KeyMessage } from '../../shared/queue/message.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { planTimer } from '../../shared/queue/timer-forwarder.ts';
import { instrumented, type ControllerSpec } from '../../shared/reconcile/instrument.ts';
import { done } from '../../shared/reconcile/outcome.ts';
import { expandSweep, runSweep, SCHEDULED_TIME, sweepKeys, sweepMessage, sweepTimerBody, type SweptObject } from '../../shared/reconcile/sweep.ts';

const AT = Date.parse('2026-12-01T22:00:00Z');
const obj = (name: string, namespace?: string, uid = `uid-${name}`): SweptObject => ({ metadata: { name, uid, ...(namespace ? { namespace } : {}) } });

describe('sweep: which keys one sweep sends', () => {
  const cases: [name: string, keys: 'each' | 'only', items: SweptObject[], want: string[]][] = [
    ['each: every node, by its bare name', 'each', [obj('node01'), obj('node02'), obj('node03')], ['node01', 'node02', 'node03']],
    ['each: namespaced objects as namespace/name', 'each', [obj('a', 'ns1'), obj('b', 'ns2')], ['ns1/a', 'ns2/b']],
    ['each: nothing listed, nothing sent', 'each', [], []],
    ['each: an object without a name is skipped', 'each', [obj('node01'), { metadata: {} }], ['node01']],
    ['only: the one KubeVirt CR', 'only', [obj('kubevirt', 'kubevirt')], ['kubevirt/kubevirt']],
    ['only: no CR, nothing', 'only', [], []],
    ['only: two CRs, nothing (as KubeVirt queues nothing then)', 'only', [obj('a', 'kubevirt'), obj('b', 'other')], []],
  ];
  for (const [name, keys, items, want] of cases) {
    test(name, () => {
      // act
      const got = sweepKeys({ keys }, items);
      // assert
      assert.deepEqual(got, want);
    });
  }

  test('the registry: the node controller sweeps every Node, the workload updater its one KubeVirt CR, each once a minute', () => {
    // act
    const got = sweeps().map(({ controller, sweep }) => `${controller} ${sweep.lists.plural} ${sweep.keys} ${sweep.periodSeconds}s`);
    // assert
    assert.deepEqual(got, ['node nodes each 60s', 'workload-updater kubevirts only 60s']);
  });

  test('expanded messages: caused by the sweep (event SWEEP, the sweep instant), valid, one dedup id per object and sweep', () => {
    // arrange
    const sweep = controllerInfo('node').sweep!;
    const items = [obj('node01'), obj('node02')];
    // act
    const first = expandSweep('node', sweep, items, AT);
    const again = expandSweep('node', sweep, items, AT);
    const next = expandSweep('node', sweep, items, AT + 60_000);
    // assert
    assert.deepEqual(first.map((m) => [m.key, m.cause.kind, m.cause.event, m.cause.uid, m.cause.seenAt]), [
      ['node01', 'Node', 'SWEEP', 'uid-node01', AT],
      ['node02', 'Node', 'SWEEP', 'uid-node02', AT],
    ]);
    for (const m of first) assert.deepEqual(parseKeyMessage(JSON.stringify(m)), m, 'what a sweep sends passes validation');
    assert.deepEqual(again.map(dedupId), first.map(dedupId), 'a sweep delivered twice sends each key once');
    assert.notDeepEqual(next.map(dedupId), first.map(dedupId), 'the next sweep of an unchanged node is not a duplicate');
  });
});

describe('sweep: message validation', () => {
  const cases: [name: string, body: unknown, want: RegExp | 'ok'][] = [
    ['the node sweep', sweepMessage('node', AT), 'ok'],
    ['the workload-updater sweep', sweepMessage('workload-updater', AT), 'ok'],
    ['a sweep of a controller without one', { ...sweepMessage('node', AT), controller: 'vmi' }, /key: @sweep: controller vmi has no sweep/],
    ['a sweep without a cause', { v: 1, controller: 'node', key: SWEEP_KEY }, /cause: missing/],
    ['a sweep with a bad seenAt', { ...sweepMessage('node', AT), cause: { ...sweepMessage('node', AT).cause, seenAt: 'now' } }, /cause.seenAt/],
    ['a look-alike key is not the sweep key', { ...sweepMessage('node', AT), key: '@sweeps' }, /key: must be a name/],
  ];
  for (const [name, body, want] of cases) {
    test(name, () => {
      // act
      const run = () => parseKeyMessage(JSON.stringify(body));
      // assert
      if (want === 'ok') assert.deepEqual(run(), body);
      else assert.throws(run, (err: Error & { reason?: string }) => want.test(err.message) && err.reason === 'MalformedMessage');
    });
  }
});

describe('sweep: the schedule\'s timer through the timer forwarder', () => {
  /** What EventBridge Scheduler sends: the template with the scheduled time written in. */
  const fired = (c: Controller, iso: string) => sweepTimerBody(c).replaceAll(SCHEDULED_TIME, iso);

  test('a fired schedule is forwarded as the sweep key, stamped with the scheduled instant, deduplicated per instant', () => {
    // arrange
    const iso = '2026-12-01T22:00:00Z';
    // act
    const plan = planTimer(fired('node', iso), AT + 400);
    const redelivered = planTimer(fired('node', iso), AT + 5_000);
    const nextMinute = planTimer(fired('node', '2026-12-01T22:01:00Z'), AT + 60_400);
    // assert
    assert.ok(plan.kind === 'forward' && redelivered.kind === 'forward' && nextMinute.kind === 'forward');
    assert.deepEqual([plan.controller, plan.groupId, plan.message.key, plan.message.cause.event, plan.message.cause.seenAt], ['node', SWEEP_KEY, SWEEP_KEY, 'SWEEP', AT]);
    assert.deepEqual(parseKeyMessage(JSON.stringify(plan.message)), plan.message);
    assert.equal(redelivered.dedupId, plan.dedupId, 'one schedule invocation delivered twice sweeps once');
    assert.notEqual(nextMinute.dedupId, plan.dedupId);
  });

  const malformed: [name: string, body: string, why: RegExp][] = [
    ['the template with no time written in', sweepTimerBody('node'), /not a timer \(v\/fireAt "<aws.scheduler.scheduled-time>"\)/],
    ['a sweep timer for a controller without a sweep', fired('node', '2026-12-01T22:00:00Z').replace('"controller":"node"', '"controller":"vmi"'), /controller vmi has no sweep/],
    ['not JSON', '{"v":1,', /JSON/],
  ];
  for (const [name, body, why] of malformed) {
    test(`dropped with a reason: ${name}`, () => {
      // act
      const plan = planTimer(body, AT);
      // assert
      assert.ok(plan.kind === 'drop' && why.test(plan.why), JSON.stringify(plan));
    });
  }
});

/** A Kubernetes client that serves one node list and counts the calls. */
function nodeLister(names: readonly string[]): { kube: KubeClient; lists: string[] } {
  const lists: string[] = [];
  const kube = {
    list: async (res: { plural: string }) => {
      lists.push(res.plural);
      return { items: names.map((n) => obj(n)), metadata: { resourceVersion: '7' } };
    },
  } as unknown as KubeClient;
  return { kube, lists };
}

const receivedOf = (message: KeyMessage): ReceivedKey => ({ message, receipt: 'r1', attempt: 1, enqueuedAt: AT, coalesced: 1 });

describe('sweep: expansion', () => {
  test('runSweep lists once and sends one key per node', async () => {
    // arrange
    const { kube, lists } = nodeLister(['node01', 'node02']);
    const sent: KeyMessage[] = [];
    // act
    const outcome = await runSweep('node', sweepMessage('node', AT), { kube, queue: { send: async (ms) => void sent.push(...ms) }, log: silentLogger });
    // assert
    assert.deepEqual(outcome, done);
    assert.deepEqual(lists, [NODES.plural]);
    assert.deepEqual(sent.map((m) => `${m.controller} ${m.key} ${m.cause.event}`), ['node node01 SWEEP', 'node node02 SWEEP']);
  });

  test('a runtime that gives no queue refuses the sweep with a clear, permanent reason', async () => {
    // arrange
    const { kube } = nodeLister(['node01']);
    // act
    const run = runSweep('node', sweepMessage('node', AT), { kube, queue: undefined, log: silentLogger });
    // assert
    await assert.rejects(run, (err: Error & { reason?: string }) => err.reason === 'NoSweepQueue' && /no queue to sweep into/.test(err.message));
  });

  test('through the shared reconcile path and the embedded queue: the sweep is expanded, never reconciled; a duplicate sweep adds nothing; a malformed one is dead-lettered', async () => {
    // arrange
    const queue = new SqliteKeyQueue({ db: ':memory:' });
    const { kube, lists } = nodeLister(['node01', 'node02', 'node03']);
    const reconciled: string[] = [];
    const spec: ControllerSpec<unknown> = { controller: 'node', reconcile: async (key) => (reconciled.push(key), done), deps: () => ({}) };
    const handle = instrumented(spec, { kube, metrics: new MetricsRegistry(), log: silentLogger, queue });
    await queue.send([sweepMessage('node', AT)]);
    await queue.sendRaw('vmi', JSON.stringify({ ...sweepMessage('node', AT), controller: 'vmi' }));
    // act
    const [sweep] = await queue.receive('node', 1, 0);
    await handle(sweep!);
    await queue.ack('node', sweep!.receipt);
    await queue.send([sweepMessage('node', AT)]); // the same sweep delivered again
    const keys = (await queue.receive('node', 10, 0)).map((rk) => `${rk.message.key} ${rk.message.cause.event}`).sort();
    await queue.receive('vmi', 1, 0);
    const dead = await queue.listDeadLetters({ controller: 'vmi' });
    // assert
    assert.deepEqual(reconciled, [], 'the sweep key is never handed to the reconcile');
    assert.deepEqual(keys, ['node01 SWEEP', 'node02 SWEEP', 'node03 SWEEP'], 'one key per node; the sweep sent twice at one instant is not delivered again');
    assert.deepEqual(lists, ['nodes'], 'one LIST per sweep');
    assert.deepEqual(dead.map((d) => `${d.reason} ${d.message}`), ['MalformedMessage key: @sweep: controller vmi has no sweep']);
    await queue.close();
  });
});

describe('sweep: the local runtime\'s timers', () => {
  test('one timer per swept controller, its period on the sandbox clock; a tick sends the sweep stamped with that clock', async () => {
    // arrange
    const sent: KeyMessage[] = [];
    const timers = new SweepTimers({ queue: { send: async (ms) => void sent.push(...ms) }, log: silentLogger, now: () => AT, clockSpeed: 20 });
    // act
    const periods = timers.periods();
    await timers.fire('node');
    // assert
    assert.deepEqual(periods, [
      { controller: 'node', everyMs: 3000 },
      { controller: 'workload-updater', everyMs: 3000 },
    ]);
    assert.deepEqual(sent, [sweepMessage('node', AT)]);
  });

  test('a send that fails is logged, not thrown (the next period sends again)', async () => {
    // arrange
    const warned: string[] = [];
    const timers = new SweepTimers({ queue: { send: async () => Promise.reject(new Error('disk full')) }, log: { warn: (m, f) => void warned.push(`${m} ${JSON.stringify(f)}`) }, now: () => AT });
    // act
    await timers.fire('node');
    // assert
    assert.deepEqual(warned, ['sweep not sent {"controller":"node","error":"disk full"}']);
  });
});
