/**
 * The recovery decisions of an interrupted backend-storage migration (functions/migration/recovery.ts,
 * KubeVirt's `RecoverFromBrokenMigration`), table-driven: which migrations need the Job, and what
 * the Job's conditions make of the migration.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { nextPhase } from '../../../functions/migration/phases.ts';
import { decideRecovery, needsRecovery, recoveryJobName } from '../../../functions/migration/recovery.ts';

const migration = (pvcs?: { source: string; target: string }, phase = 'Running'): VirtualMachineInstanceMigration => ({
  metadata: { name: 'm', namespace: 'default', uid: 'mig-uid' },
  spec: { vmiName: 'v' },
  status: { phase, ...(pvcs ? { migrationState: { sourcePersistentStatePVCName: pvcs.source, targetPersistentStatePVCName: pvcs.target } } : {}) },
});
const vmi = (tpm: boolean): VirtualMachineInstance => ({
  metadata: { name: 'v', namespace: 'default', uid: 'vmi-uid' },
  spec: { domain: { devices: tpm ? { tpm: { persistent: true } } : {} } } as VirtualMachineInstance['spec'],
  status: { phase: 'Running', migrationState: { migrationUid: 'mig-uid', targetNode: 'b', startTimestamp: '2026-12-02T07:00:00Z' } },
});
const job = (...conditions: { type: string; status?: string; reason?: string; message?: string }[]): V1Job => ({ status: { conditions: conditions.map((c) => ({ status: 'True', ...c })) } });

describe('which interrupted migrations run the recovery Job', () => {
  const cases: [string, VirtualMachineInstanceMigration, VirtualMachineInstance | undefined, boolean][] = [
    ['persistent TPM, a target claim of its own', migration({ source: 'src', target: 'tgt' }), vmi(true), true],
    ['a shared (ReadWriteMany) claim: source = target', migration({ source: 'src', target: 'src' }), vmi(true), false],
    ['no claims recorded yet (did not really start)', migration(), vmi(true), false],
    ['no backend storage', migration({ source: 'src', target: 'tgt' }), vmi(false), false],
    ['the VMI is gone (KubeVirt fails it)', migration({ source: 'src', target: 'tgt' }), undefined, false],
  ];
  for (const [name, m, v, want] of cases) test(name, () => assert.equal(needsRecovery(m, v), want));

  test('the interruptions: target pod down, target pod gone, VMI ended — not a cancel or a source failure', () => {
    const m = migration({ source: 'src', target: 'tgt' });
    const gone = nextPhase({ migration: m, vmi: vmi(true), targetPod: undefined, otherMigrationActive: false });
    const down = nextPhase({ migration: m, vmi: vmi(true), targetPod: { status: { phase: 'Failed' } }, otherMigrationActive: false });
    const reported = nextPhase({ migration: m, vmi: { ...vmi(true), status: { phase: 'Running', migrationState: { migrationUid: 'mig-uid', failed: true } } }, targetPod: { status: { phase: 'Running' } }, otherMigrationActive: false });
    assert.deepEqual([gone.interrupted, down.interrupted, reported.interrupted], [true, true, undefined]);
    assert.equal(recoveryJobName(m), 'recover-m');
  });
});

describe('what the recovery Job says', () => {
  const cases: [string, V1Job | undefined, ReturnType<typeof decideRecovery>][] = [
    ['no Job → create it', undefined, { kind: 'create' }],
    ['no condition yet → still running', job(), { kind: 'running' }],
    ['a condition not True → still running', job({ type: 'Complete', status: 'False' }), { kind: 'running' }],
    ['Complete → the marker is there: Succeeded', job({ type: 'SuccessCriteriaMet' }, { type: 'Complete' }), { kind: 'succeeded' }],
    ['Failed by PodFailurePolicy → no marker: Failed', job({ type: 'FailureTarget', reason: 'PodFailurePolicy' }, { type: 'Failed', reason: 'PodFailurePolicy' }), { kind: 'failed' }],
    ['Failed otherwise → delete and retry, with its message', job({ type: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }), { kind: 'retry', message: 'Job was active longer than specified deadline' }],
  ];
  for (const [name, j, want] of cases) test(name, () => assert.deepEqual(decideRecovery(j), want));
});
