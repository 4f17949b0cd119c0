/**
 * `diagnose restore/<ns>/<name>` verdicts as a table (ops/diagnose/restore-verdicts.ts):
 * complete, gone, Failed, waiting for the target to stop, a snapshot not ready, the target held
 * by another restore, in progress (a note, a problem once slow, unbound claims as evidence),
 * dead-lettered.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { diagnoseRestore, type RestoreEvidence, type RestoreView } from '../../ops/diagnose/restore-verdicts.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const WAIT = 'Waiting for target VM to be powered off. Please stop the restore target to proceed with restore, or the operation will fail after 5m0s';

describe('restore verdicts', () => {
  const r: RestoreView = { name: 'r', resourceVersion: '7', complete: false, deleting: false, targetName: 'vm', snapshotName: 's', createdAt: NOW - 30_000, conditions: [] };
  const ev = (over: Partial<RestoreEvidence>): RestoreEvidence => ({ now: NOW, key: 'default/r', restore: r, unboundClaims: [], deadLetters: [], traces: [], ...over });
  const cond = (status: string, reason: string) => [{ type: 'Progressing', status, reason }, { type: 'Ready', status: 'False', reason }];
  const cases: { name: string; e: RestoreEvidence; first: string; healthy?: boolean; hint?: RegExp }[] = [
    { name: 'complete', e: ev({ restore: { ...r, complete: true } }), first: 'healthy: restore default/r of snapshot s into VM vm is complete', healthy: true },
    { name: 'gone', e: ev({ restore: undefined }), first: 'not found: VirtualMachineRestore default/r does not exist' },
    { name: 'Failed', e: ev({ restore: { ...r, conditions: [...cond('False', 'x'), { type: 'Failure', status: 'True', reason: 'Restore target VMI must be powered off before restore operation' }] } }), first: 'restore Failed: Restore target VMI must be powered off before restore operation' },
    { name: 'waiting for the target to stop', e: ev({ restore: { ...r, conditions: cond('False', WAIT) } }), first: `restore not complete: ${WAIT}`, hint: /stop the VM default\/vm/ },
    { name: 'the snapshot not ready', e: ev({ restore: { ...r, conditions: cond('False', 'VMSnapshot default/s not ready') } }), first: 'restore not complete: VMSnapshot default/s not ready' },
    { name: 'the target held by another restore', e: ev({ targetHeldBy: 'other', restore: { ...r, conditions: cond('True', 'Initializing VirtualMachineRestore') } }), first: 'restore not complete: the target VM default/vm is held by restore other' },
    { name: 'in progress: a note', e: ev({ restore: { ...r, conditions: cond('True', 'Creating new PVCs') } }), first: 'healthy: restore default/r of snapshot s into VM vm is in progress for 30 s', healthy: true },
    { name: 'in progress for long, claims not bound', e: ev({ unboundClaims: [{ name: 'restore-u-disk', phase: 'Pending' }], restore: { ...r, createdAt: NOW - 600_000, conditions: cond('True', 'Creating new PVCs') } }), first: 'restore not complete: in progress: Creating new PVCs for 10 min', hint: /CSI driver/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const d = diagnoseRestore(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
      if (c.hint) assert.match(d.findings[0]?.hint ?? '', c.hint);
    });
  }
  test('dead-lettered: the dead letter first', () => {
    const d = diagnoseRestore(ev({ deadLetters: [{ controller: 'restore', key: 'default/r', body: '{}', reason: 'VirtualMachineRestoreError', message: 'boom', attempts: 9, firstFailureAt: NOW - 60_000, lastFailureAt: NOW - 1000 }] }));
    assert.equal(d.healthy, false);
    assert.match(d.verdict, /^restore not complete: /);
  });
});
