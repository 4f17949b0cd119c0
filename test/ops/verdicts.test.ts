/**
 * The diagnose verdicts, pure and table-driven: for each kind of evidence, the first line the
 * operator reads (and whether it counts as healthy).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { diagnoseMigration, type MigrationEvidence } from '../../ops/diagnose/migration-verdicts.ts';
import { diagnoseVm, type VmEvidence } from '../../ops/diagnose/vm-verdicts.ts';
import { diagnoseVmi, type VmiEvidence } from '../../ops/diagnose/vmi-verdicts.ts';
import { humanSeconds } from '../../ops/diagnose/finding.ts';
import type { DeadLetter } from '../../shared/queue/port.ts';
import { NOW, trace } from './fixtures.ts';

const letter: DeadLetter = { controller: 'vmi', key: 'default/x', reason: 'InternalError', message: 'injected fault', attempts: 5, firstFailureAt: NOW - 90_000, lastFailureAt: NOW - 30_000, body: '' } as DeadLetter;

const vmi = { namespace: 'default', name: 'x', uid: 'u1', resourceVersion: '10', phase: 'Pending', deleting: false, conditions: [] };
const running = { ...vmi, phase: 'Running', nodeName: 'node01' };
const pod = { name: 'virt-launcher-x-abcde', phase: 'Running', nodeName: 'node01', createdAt: NOW - 120_000, deleting: false };

function vmiEvidence(over: Partial<VmiEvidence>): VmiEvidence {
  return { now: NOW, key: 'default/x', pods: [], claims: [], events: [], deadLetters: [], traces: [], ...over };
}

describe('VMI verdicts', () => {
  const cases: { name: string; e: VmiEvidence; first: string; healthy?: boolean }[] = [
    { name: 'running with its pod', e: vmiEvidence({ vmi: running, pods: [pod], traces: [trace()] }), first: 'healthy: vmi default/x is Running on node01 (launcher pod virt-launcher-x-abcde Running)', healthy: true },
    { name: 'gone', e: vmiEvidence({}), first: 'not found: VirtualMachineInstance default/x does not exist' },
    { name: 'missing PVC', e: vmiEvidence({ vmi, claims: [{ volume: 'disk', kind: 'pvc', name: 'default/data' }] }), first: 'no launcher pod: PVC default/data does not exist (volume disk)' },
    {
      name: 'PVC Pending on a WaitForFirstConsumer class',
      e: vmiEvidence({ vmi, claims: [{ volume: 'disk', kind: 'pvc', name: 'default/data', pvc: { phase: 'Pending', storageClass: 'slow' }, bindingMode: 'WaitForFirstConsumer' }] }),
      first: 'no launcher pod: PVC default/data is Pending (StorageClass slow, WaitForFirstConsumer)',
    },
    { name: 'DataVolume importing', e: vmiEvidence({ vmi, claims: [{ volume: 'disk', kind: 'dataVolume', name: 'default/dv', dataVolume: { phase: 'ImportInProgress', progress: '42%' } }] }), first: 'no launcher pod: DataVolume default/dv is ImportInProgress (42%)' },
    {
      name: 'invalid network spec, from the Synchronized condition',
      e: vmiEvidence({ vmi: { ...vmi, conditions: [{ type: 'Synchronized', status: 'False', reason: 'FailedCreate', message: 'failed to render launch manifest: spec.networks[1].multus.networkName: is required' }] } }),
      first: 'no launcher pod: invalid network spec: spec.networks[1].multus.networkName: is required',
    },
    { name: 'dead-lettered', e: vmiEvidence({ vmi, deadLetters: [letter] }), first: 'no launcher pod: the key vmi default/x is dead-lettered (InternalError, 5 attempts, 30 s ago)' },
    {
      name: 'an expectation set by a reconcile that left no trace',
      e: vmiEvidence({ vmi, expectation: { add: 1, del: 0, deleteKeys: [], setAt: NOW - 40_000 } }),
      first: 'no launcher pod: waiting on a pod expectation set 40 s ago by a reconcile that left no trace (it timed out or crashed); it expires in 4 min 20 s',
    },
    {
      name: 'conflicts on status writes',
      e: vmiEvidence({ vmi: running, pods: [pod], traces: [1, 2, 3].map((i) => trace({ receivedAt: NOW - i * 1000, writes: [{ verb: 'update', resource: 'virtualmachineinstances', namespace: 'default', name: 'x', code: 409 }], outcome: { kind: 'retry', reason: 'Conflict', message: 'modified' } })) }),
      first: 'status writes for this VMI got 3 conflicts in the last 5 min',
    },
    {
      name: 'two conflicts are ordinary optimistic concurrency',
      e: vmiEvidence({ vmi: running, pods: [pod], traces: [1, 2].map((i) => trace({ receivedAt: NOW - i * 1000, durationMs: 1, writes: [{ verb: 'update', resource: 'virtualmachineinstances', namespace: 'default', name: 'x', code: 409 }] })) }),
      first: 'healthy: vmi default/x is Running on node01 (launcher pod virt-launcher-x-abcde Running)',
      healthy: true,
    },
    {
      name: 'relay lag: the current resourceVersion never reached a reconcile',
      e: vmiEvidence({ vmi: { ...running, resourceVersion: '12' }, pods: [pod], traces: [trace()] }),
      first: "the relay's last event for this VMI (resourceVersion 10, seen 1 min ago) is older than its current resourceVersion 12",
    },
    {
      name: 'no lag while the change is fresh',
      e: vmiEvidence({ vmi: { ...running, resourceVersion: '12' }, pods: [pod], traces: [trace({ receivedAt: NOW - 2000 })] }),
      first: 'healthy: vmi default/x is Running on node01 (launcher pod virt-launcher-x-abcde Running)',
      healthy: true,
    },
    { name: 'never reconciled', e: vmiEvidence({ vmi }), first: "no launcher pod: no reconcile of vmi default/x is recorded: is the relay running, and the VMI controller's queue moving? (virt-reconciler queues)" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange (the evidence above)
      // act
      const d = diagnoseVmi(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});

function migrationEvidence(over: Partial<MigrationEvidence>): MigrationEvidence {
  return { now: NOW, key: 'default/m', targetPods: [], deadLetters: [], traces: [], cluster: { limit: 5, holders: [] }, ...over };
}
const migration = { namespace: 'default', name: 'm', uid: 'mu', resourceVersion: '20', vmiName: 'x', phase: 'Pending', createdAt: NOW - 120_000, deleting: false, sourceNode: 'node01', vmiExists: true };

describe('migration verdicts', () => {
  const holders = ['default/a', 'default/b', 'default/c', 'default/d', 'default/e'];
  const cases: { name: string; e: MigrationEvidence; first: string; healthy?: boolean }[] = [
    {
      name: 'the cluster limit is full',
      e: migrationEvidence({ migration, cluster: { limit: 5, holders }, traces: [trace({ controller: 'migration', key: 'default/m', outcome: { kind: 'requeue', afterSeconds: 5, why: 'parallelMigrationsPerCluster reached' } })] }),
      first: 'migration Pending: the cluster limit is full (5 of 5) — these 5 migrations hold it: default/a, default/b, default/c, default/d, default/e',
    },
    {
      name: 'the target pod is unschedulable',
      e: migrationEvidence({ migration, cluster: { limit: 5, holders: ['default/m'] }, targetPods: [{ name: 't', phase: 'Pending', createdAt: NOW - 120_000, deleting: false, unschedulable: true, timeoutInSeconds: 180, scheduled: { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient memory.' } }] }),
      first: 'target pod unschedulable: 0/3 nodes are available: 3 Insufficient memory.; the unschedulable timeout fires in 3 min',
    },
    { name: 'running', e: migrationEvidence({ migration: { ...migration, phase: 'Running' }, targetPods: [{ name: 't', phase: 'Running', nodeName: 'node02', createdAt: NOW, deleting: false, unschedulable: false }] }), first: 'healthy: migration default/m is Running (target pod t Running on node02)', healthy: true },
    { name: 'dead-lettered', e: migrationEvidence({ migration, deadLetters: [{ ...letter, controller: 'migration', key: 'default/m' }] }), first: 'migration Pending: the key migration default/m is dead-lettered (InternalError, 5 attempts, 30 s ago)' },
    { name: 'its VMI is gone', e: migrationEvidence({ migration: { ...migration, vmiExists: false } }), first: 'migration Pending: its VMI default/x does not exist' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange (above)
      // act
      const d = diagnoseMigration(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});

describe('VM verdicts', () => {
  const vm = { name: 'x', resourceVersion: '5', runStrategy: 'Always', printableStatus: 'Running', conditions: [] };
  const vmiHealthy = diagnoseVmi(vmiEvidence({ vmi: running, pods: [pod], traces: [trace()] }));
  const vmiStuck = diagnoseVmi(vmiEvidence({ vmi, claims: [{ volume: 'disk', kind: 'pvc', name: 'default/data' }] }));
  const cases: { name: string; e: VmEvidence; first: string; healthy?: boolean }[] = [
    { name: 'running, its VMI healthy', e: { now: NOW, key: 'default/x', vm, deadLetters: [], traces: [], vmi: vmiHealthy }, first: 'healthy: vm default/x is Running (Always); vmi default/x is Running on node01 (launcher pod virt-launcher-x-abcde Running)', healthy: true },
    { name: "its VMI's problem is the first line", e: { now: NOW, key: 'default/x', vm: { ...vm, printableStatus: 'Starting' }, deadLetters: [], traces: [], vmi: vmiStuck }, first: 'no launcher pod: PVC default/data does not exist (volume disk)' },
    { name: 'Always but no VMI', e: { now: NOW, key: 'default/x', vm: { ...vm, printableStatus: 'Stopped' }, deadLetters: [], traces: [trace({ controller: 'vm', outcome: { kind: 'retry', reason: 'Forbidden', message: 'no' } })] }, first: 'no VMI: VM default/x is Always but has no VMI; the last reconcile ended retry (Forbidden: no)' },
    { name: 'Halted, no VMI', e: { now: NOW, key: 'default/x', vm: { ...vm, runStrategy: 'Halted', printableStatus: 'Stopped' }, deadLetters: [], traces: [] }, first: 'healthy: vm default/x is Stopped (Halted); no VMI', healthy: true },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange (above)
      // act
      const d = diagnoseVm(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});

test('humanSeconds: s, min s, h min', () => {
  // arrange
  const cases: [number, string][] = [[0, '0 s'], [40, '40 s'], [260, '4 min 20 s'], [300, '5 min'], [7300, '2 h 1 min'], [-5, '0 s']];
  // act / assert
  for (const [s, want] of cases) assert.equal(humanSeconds(s), want);
});
