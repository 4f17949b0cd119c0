/**
 * The shared reconcile path records one trace entry per reconcile (issue 18) with no code in the
 * controller: cause, queue times, attempt, coalescing, outcome as the queue settles it, and every
 * API write with the apiserver's real answer (the sandbox API server, with injected faults).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { PODS, VMIS, VMS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { instrumented, type ControllerSpec } from '../../shared/reconcile/instrument.ts';
import { done, requeueAfter, type Outcome } from '../../shared/reconcile/outcome.ts';
import { openSqliteState, type SqliteStateStore } from '../../shared/state/sqlite-state.ts';
import type { Traces } from '../../shared/state/traces.ts';

const T0 = Date.now();

function received(name: string, attempt = 1, firstFailureAt?: number): ReceivedKey {
  return {
    message: { v: 1, controller: 'vmi', key: `default/${name}`, cause: { kind: 'Pod', namespace: 'default', name: `virt-launcher-${name}`, uid: 'u1', resourceVersion: '41', event: 'MODIFIED', seenAt: T0 - 30 } },
    receipt: `r-${name}-${attempt}`,
    attempt,
    ...(firstFailureAt !== undefined ? { firstFailureAt } : {}),
    enqueuedAt: T0 - 20,
    coalesced: 3,
  };
}

/** A controller whose reconcile is `body`, over the counting client the path hands it. */
function spec(body: (kube: KubeClient) => Promise<Outcome>): ControllerSpec<KubeClient> {
  return { controller: 'vmi', reconcile: (_key, kube) => body(kube), deps: (kube) => kube };
}

describe('trace recording in the shared reconcile path', () => {
  let server: ApiServer;
  let kube: KubeClient;
  let state: SqliteStateStore;
  before(async () => {
    server = await startApiServer();
    kube = createKubeClient(server.kubeConfig());
    state = openSqliteState();
  });
  after(async () => {
    await state.close();
    await server.close();
  });
  const run = (body: (kube: KubeClient) => Promise<Outcome>, rk: ReceivedKey, traces: Traces = state.traces) =>
    instrumented(spec(body), { kube, metrics: new MetricsRegistry(), log: silentLogger, traces, retry: { maxAttempts: 4, deadLetterAfterMs: 3_600_000 } })(rk);

  test('a reconcile that creates a pod and loses a status write: every write with its code, outcome retry Conflict', async () => {
    // arrange
    // A VM, because KubeVirt's VMI has no /status subresource.
    const vm = await kube.create(VMS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'a', namespace: 'default' }, spec: { template: { spec: { domain: { devices: {} } } } } } as VirtualMachine);
    server.faults.failNext(409, 1, { verb: 'update', resource: 'virtualmachines/status' });
    // act
    await assert.rejects(
      run(async (k) => {
        await k.get(VMS, 'default', 'a');
        await k.create(PODS, { metadata: { generateName: 'virt-launcher-a-', namespace: 'default' }, spec: { containers: [{ name: 'compute', image: 'x' }] } } as V1Pod);
        await k.update(VMS, { ...vm, status: { printableStatus: 'Starting' } }, { subresource: 'status' });
        return done;
      }, received('a')),
    );
    // assert
    const [entry] = await state.traces.recent('vmi', 'default/a', Date.now());
    assert.ok(entry, 'one entry recorded');
    assert.deepEqual(entry.cause, { kind: 'Pod', namespace: 'default', name: 'virt-launcher-a', resourceVersion: '41', event: 'MODIFIED', seenAt: T0 - 30 });
    assert.deepEqual([entry.enqueuedAt, entry.attempt, entry.coalesced, entry.reads], [T0 - 20, 1, 3, 1]);
    assert.deepEqual({ kind: entry.outcome.kind, reason: 'reason' in entry.outcome ? entry.outcome.reason : '' }, { kind: 'retry', reason: 'Conflict' });
    assert.equal(entry.writes.length, 2);
    assert.match(entry.writes[0]?.name ?? '', /^virt-launcher-a-\w{5}$/, 'the generated name, from the answer');
    assert.deepEqual(entry.writes.map((w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name.replace(/-\w{5}$/, '-*')} ${w.code}`), [
      'create pods default/virt-launcher-a-* 201',
      'update virtualmachines/status default/a 409',
    ]);
    assert.ok(entry.receivedAt >= T0 && entry.durationMs >= 0);
  });

  test('requeue-after and a delete of a missing pod (404) are recorded as they happened', async () => {
    // act
    const outcome = await run(async (k) => {
      await k.delete(PODS, 'default', 'gone');
      return requeueAfter(30, 'waiting on pod expectations');
    }, received('b'));
    // assert
    assert.equal(outcome.kind, 'requeue');
    const [entry] = await state.traces.recent('vmi', 'default/b', Date.now());
    assert.deepEqual(entry?.outcome, { kind: 'requeue', afterSeconds: 30, why: 'waiting on pod expectations' });
    assert.deepEqual(entry?.writes, [{ verb: 'delete', resource: 'pods', namespace: 'default', name: 'gone', code: 404 }]);
  });

  // The queues' rule: a transient failure dead-letters only past maxAttempts (4 here) AND an hour of failing.
  const lastAttempt = [
    { name: 'c1', attempt: 4, failingMs: 2 * 3_600_000, want: 'dead-lettered', why: 'past both the count and the window' },
    { name: 'c2', attempt: 4, failingMs: 60_000, want: 'retry', why: 'past the count, inside the window: an outage must not dead-letter' },
    { name: 'c3', attempt: 9, failingMs: 60_000, want: 'retry', why: 'far past the count, still inside the window' },
    { name: 'c4', attempt: 3, failingMs: 2 * 3_600_000, want: 'retry', why: 'past the window, not yet the count' },
  ] as const;
  for (const c of lastAttempt) {
    test(`a transient failure is recorded as the queue will settle it: ${c.want}, ${c.why}`, async () => {
      // act
      await assert.rejects(run(async (k) => {
        await k.get(VMIS, 'default', c.name);
        throw new Error('boom');
      }, received(c.name, c.attempt, Date.now() - c.failingMs)));
      // assert
      const [entry] = await state.traces.recent('vmi', `default/${c.name}`, Date.now());
      assert.deepEqual(entry?.outcome, { kind: c.want, reason: 'InternalError', message: 'boom' }, c.why);
    });
  }

  test('a failing trace store never fails the reconcile', async () => {
    // arrange
    const broken: Traces = { record: async () => { throw new Error('table down'); }, recordBatch: async () => { throw new Error('table down'); }, recent: async () => [] };
    // act
    const outcome = await run(async () => done, received('d'), broken);
    // assert
    assert.equal(outcome.kind, 'done');
  });
});
