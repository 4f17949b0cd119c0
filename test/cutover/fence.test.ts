/**
 * The cutover's fence in the reconcile path and the keeper (docs/cutover.md): a key met while
 * another controller holds virt-controller's Lease is dropped (that controller acts on it, and we
 * re-send every key when the Lease becomes ours); a key met while the Lease is ours but our own
 * renewal is overdue is put off, never dropped — nothing else would ever bring it back. A keeper
 * that renews after the Lease had lapsed re-sends every key, as it does on becoming the writer.
 * A shadow reconcile that ran its course tells the judge so (what it left unwritten it would leave);
 * one that met a race or waits on its expectations does not. virt-api's subresource calls (no dry
 * run there) are never sent from a shadow reconcile, nor while fenced.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PODS } from '../../shared/api/resources.ts';
import type { WriteMode } from '../../shared/cutover/gate.ts';
import { LeaseKeeper } from '../../shared/cutover/keeper.ts';
import { viewOf, type LeaseClient } from '../../shared/cutover/lease.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { instrumented, type ControllerSpec, type CutoverHooks } from '../../shared/reconcile/instrument.ts';
import { done, waitAfter, type Outcome } from '../../shared/reconcile/outcome.ts';
import { KubeTransientError } from '../../shared/kube/errors.ts';
import { FencedError, guardedVirtApi } from '../../shared/kube/guarded-writes.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import { runShadowed } from '../../shared/cutover/shadow-state.ts';

const received: ReceivedKey = {
  message: { v: 1, controller: 'vmi', key: 'default/a', cause: { kind: 'VirtualMachineInstance', namespace: 'default', name: 'a', uid: 'u1', resourceVersion: '7', event: 'MODIFIED', seenAt: 0 } },
  receipt: 'r1',
  attempt: 1,
  enqueuedAt: 0,
  coalesced: 1,
};

interface Case {
  readonly name: string;
  /** The fence's answer before the reconcile, then at its write (and after). */
  readonly modes: readonly WriteMode[];
  readonly outcome: Outcome['kind'];
  readonly reconciled: boolean;
  readonly written: boolean;
  readonly metric: 'fenced_reconciles_total' | 'overdue_reconciles_total' | undefined;
}

const CASES: readonly Case[] = [
  { name: 'ours and renewed: the write is sent', modes: ['write'], outcome: 'done', reconciled: true, written: true, metric: undefined },
  { name: "another controller's Lease: the key is dropped unreconciled", modes: ['fenced'], outcome: 'done', reconciled: false, written: false, metric: 'fenced_reconciles_total' },
  { name: 'ours, renewal overdue: the key is put off unreconciled', modes: ['overdue'], outcome: 'requeue', reconciled: false, written: false, metric: 'overdue_reconciles_total' },
  { name: 'lost mid-reconcile: the write is not sent, the key is dropped', modes: ['write', 'fenced'], outcome: 'done', reconciled: true, written: false, metric: 'fenced_reconciles_total' },
  { name: 'renewal overdue mid-reconcile: the write is not sent, the key is put off', modes: ['write', 'overdue'], outcome: 'requeue', reconciled: true, written: false, metric: 'overdue_reconciles_total' },
  { name: 'overdue at the write, renewed again by the time the refusal is looked at: still put off', modes: ['write', 'overdue', 'write'], outcome: 'requeue', reconciled: true, written: false, metric: 'overdue_reconciles_total' },
  { name: 'handed back mid-reconcile (shadow deployment): the key is dropped for the next holder', modes: ['write', 'shadow'], outcome: 'done', reconciled: true, written: false, metric: 'fenced_reconciles_total' },
];

describe('the fence in the reconcile path', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      // arrange
      const writes: string[] = [];
      const kube = { create: async (_r: unknown, obj: { metadata?: { name?: string } }) => (writes.push(`create ${obj.metadata?.name}`), obj) } as unknown as KubeClient;
      let asked = 0;
      const cutover: CutoverHooks = {
        mode: async () => c.modes[Math.min(asked++, c.modes.length - 1)]!,
        dryRun: kube,
        record: () => assert.fail('nothing is dry-run here'),
      };
      let reconciled = false;
      const spec: ControllerSpec<KubeClient> = {
        controller: 'vmi',
        deps: (k) => k,
        reconcile: async (_key, k) => {
          reconciled = true;
          await k.create(PODS, { metadata: { name: 'virt-launcher-a-x', namespace: 'default' } });
          return done;
        },
      };
      const metrics = new MetricsRegistry();
      // act
      const outcome = await instrumented(spec, { kube, metrics, log: silentLogger, cutover })(received);
      // assert
      assert.equal(outcome.kind, c.outcome, JSON.stringify(outcome));
      if (outcome.kind === 'requeue') assert.ok(outcome.afterSeconds > 0 && outcome.afterSeconds <= 2, `retried soon, not ${outcome.afterSeconds} s later`);
      assert.equal(reconciled, c.reconciled, 'whether the reconcile ran');
      assert.deepEqual(writes, c.written ? ['create virt-launcher-a-x'] : [], 'what reached the API server');
      for (const m of ['fenced_reconciles_total', 'overdue_reconciles_total'] as const) assert.equal(metrics.total(m), m === c.metric ? 1 : 0, m);
    });
  }
});

const SHADOW_PASSES: readonly { name: string; dryRunAnswer: 'ok' | 'Conflict'; outcome: Outcome | 'throws'; settled: number }[] = [
  { name: 'a pass that ran its course', dryRunAnswer: 'ok', outcome: done, settled: 1 },
  { name: 'a pass that requeues after deciding (a timeout to watch)', dryRunAnswer: 'ok', outcome: { kind: 'requeue', afterSeconds: 5, why: 'MigrationRequired pending' }, settled: 1 },
  { name: 'a pass waiting on its expectations', dryRunAnswer: 'ok', outcome: waitAfter(1, 'pod expectations not yet satisfied'), settled: 0 },
  { name: 'a pass whose dry run met a Conflict (it read before the live controller wrote)', dryRunAnswer: 'Conflict', outcome: done, settled: 0 },
  { name: 'a pass that failed', dryRunAnswer: 'ok', outcome: 'throws', settled: 0 },
];

describe('shadow reconciles and the judge', () => {
  for (const c of SHADOW_PASSES) {
    test(`${c.name}: settled ${c.settled}×`, async () => {
      // arrange
      const live = { create: async () => assert.fail('a shadow write never goes to the live client') } as unknown as KubeClient;
      const dryRun = {
        create: async (_r: unknown, obj: unknown) => {
          if (c.dryRunAnswer === 'Conflict') throw new KubeTransientError('Conflict', { verb: 'create', resource: 'pods' }, 'the object has been modified');
          return obj;
        },
      } as unknown as KubeClient;
      const settled: string[] = [];
      const recorded: string[] = [];
      const cutover: CutoverHooks = { mode: async () => 'shadow', dryRun, record: (_c, _k, w) => void recorded.push(w.verb), settled: (ctrl, key) => void settled.push(`${ctrl} ${key}`) };
      const spec: ControllerSpec<KubeClient> = {
        controller: 'vmi',
        deps: (k) => k,
        reconcile: async (_key, k) => {
          await k.create(PODS, { metadata: { name: 'virt-launcher-a-x', namespace: 'default' } }).catch(() => undefined);
          if (c.outcome === 'throws') throw new Error('ECONNRESET');
          return c.outcome;
        },
      };
      // act
      await instrumented(spec, { kube: live, metrics: new MetricsRegistry(), log: silentLogger, cutover })(received).catch(() => undefined);
      // assert
      assert.deepEqual(recorded, c.dryRunAnswer === 'ok' ? ['create'] : [], 'decisions recorded');
      assert.deepEqual(settled, Array(c.settled).fill('vmi default/a'));
    });
  }
});

const VIRT_API: readonly { name: string; mode: WriteMode | undefined; shadowPass: boolean; sent: boolean; refused: boolean }[] = [
  { name: 'no cutover: sent', mode: undefined, shadowPass: false, sent: true, refused: false },
  { name: 'ours to write: sent', mode: 'write', shadowPass: false, sent: true, refused: false },
  { name: 'a shadow reconcile: not sent, answered as accepted', mode: 'shadow', shadowPass: true, sent: false, refused: false },
  { name: 'a shadow reconcile after the Lease became ours mid-pass: still not sent', mode: 'write', shadowPass: true, sent: false, refused: false },
  { name: "another controller's Lease: refused", mode: 'fenced', shadowPass: false, sent: false, refused: true },
  { name: 'our renewal overdue: refused (the key is put off)', mode: 'overdue', shadowPass: false, sent: false, refused: true },
];

describe("virt-api's subresource calls under the cutover", () => {
  for (const c of VIRT_API) {
    test(c.name, async () => {
      // arrange
      const sent: string[] = [];
      const inner: VirtApiClient = { put: async (target, ns, name, verb) => void sent.push(`${target}/${ns}/${name}/${verb}`) };
      const client = guardedVirtApi(inner, c.mode ? async () => c.mode! : undefined);
      const call = () => client.put('virtualmachineinstances', 'default', 'a', 'freeze', { unfreezeTimeoutSeconds: 300 });
      // act
      const answer = await (c.shadowPass ? runShadowed(call) : call()).then(() => 'accepted', (e: unknown) => e);
      // assert
      assert.deepEqual(sent, c.sent ? ['virtualmachineinstances/default/a/freeze'] : []);
      if (c.refused) assert.ok(answer instanceof FencedError, String(answer));
      else assert.equal(answer, 'accepted');
    });
  }
});

const TIMINGS = { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 };

/** A Lease that names us and takes every renewal. */
function ourLease(): LeaseClient {
  const view = viewOf({ metadata: {}, spec: { holderIdentity: 'us', leaseDurationSeconds: TIMINGS.leaseDurationSeconds, renewTime: new Date().toISOString() } });
  return { identity: 'us', namespace: 'kubevirt', timings: TIMINGS, read: async () => ({ lease: undefined, view }), renew: async () => true } as unknown as LeaseClient;
}

const GAPS: readonly { name: string; gapMs: number; resends: number }[] = [
  { name: 'renewals every retry period: re-sent once, on becoming the writer', gapMs: 2000, resends: 1 },
  { name: 'one renewal 12 s late (past the renew deadline, the Lease still ours): the keys waited, no re-send', gapMs: 12_000, resends: 1 },
  { name: 'one renewal 16 s late (the Lease lapsed): every key re-sent again', gapMs: 16_000, resends: 2 },
];

describe('the keeper', () => {
  for (const g of GAPS) {
    test(g.name, async () => {
      // arrange
      let now = 1_000_000;
      let resends = 0;
      const keeper = new LeaseKeeper({ lease: ourLease(), log: silentLogger, now: () => now, onWritable: () => resends++ });
      // act
      await keeper.tick();
      now += 2000;
      await keeper.tick();
      now += g.gapMs;
      await keeper.tick();
      // assert
      assert.equal(keeper.writable, true);
      assert.equal(resends, g.resends, 'times every key was re-sent');
    });
  }
});
