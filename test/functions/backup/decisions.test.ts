/** The backup controller's pure decisions, table-driven: conditions as SetStatusCondition writes them, stages, outcomes, patches, the relay mapping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setStatusCondition } from '../../../functions/backup/conditions.ts';
import { backupStatusOf, outcomeOf, pullTtlLeftMs, stageOf } from '../../../functions/backup/decide.ts';
import { utilityVolumeNameOf } from '../../../functions/backup/names.ts';
import { finalizerPatch, removeUtilityVolumePatch } from '../../../functions/backup/patches.ts';
import { backupMapper } from '../../../functions/backup/wakes.ts';
import type { Patch } from '../../../shared/kube/client.ts';
import { fnv32aHex } from '../../../shared/storage/get-name.ts';

describe('backup conditions (meta.SetStatusCondition)', () => {
  const t0 = '2026-03-01T12:00:00Z';
  const t1 = '2026-03-01T12:05:00Z';
  const base = setStatusCondition([], { type: 'Progressing', status: 'True', reason: 'Initializing', message: 'a' }, t0);
  const cases = [
    { name: 'reason and message overwritten in place, time kept while the status holds', c: { status: 'True' as const, reason: 'Initiated', message: 'b' }, time: t0 },
    { name: 'a status change moves the time', c: { status: 'False' as const, reason: 'Completed', message: 'c' }, time: t1 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = setStatusCondition(base, { type: 'Progressing', ...c.c }, t1);
      assert.deepEqual(got, [{ type: 'Progressing', ...c.c, lastTransitionTime: c.time }]);
    });
  }
  test('a new type is appended', () => assert.deepEqual(setStatusCondition(base, { type: 'Quiesced', status: 'True', reason: 'r', message: '' }, t1).map((c) => c.type), ['Progressing', 'Quiesced']));
});

describe('backup stages and outcomes', () => {
  const vmi = (bs: Record<string, unknown> | undefined) => ({ spec: { domain: { devices: {} } }, status: { changedBlockTracking: { state: 'Enabled', ...(bs ? { backupStatus: bs } : {}) } } }) as never;
  const cases = [
    { name: 'no backupStatus: start', bs: undefined, want: 'start' },
    { name: "another backup's status: start (it refuses later)", bs: { backupName: 'other' }, want: 'start' },
    { name: 'ours: active', bs: { backupName: 'b' }, want: 'active' },
    { name: 'ours, completed', bs: { backupName: 'b', completed: true }, want: 'completed' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(stageOf(backupStatusOf(vmi(c.bs), 'b')), c.want));
  test('outcomes', () => {
    assert.deepEqual(outcomeOf({ completed: true, failed: true }), { kind: 'failed', message: 'unknown, no completion message' });
    assert.deepEqual(outcomeOf({ completed: true, failed: true, backupMsg: 'x' }), { kind: 'failed', message: 'x' });
    assert.deepEqual(outcomeOf({ completed: true, backupMsg: 'w' }), { kind: 'warning', message: 'w' });
    assert.deepEqual(outcomeOf({ completed: true }), { kind: 'success' });
  });
  test('pull TTL: 2 h by default from creation; the full TTL without a creation time', () => {
    const b = (ttl?: string, created?: string) => ({ metadata: created ? { creationTimestamp: created } : {}, spec: { source: { kind: 'VirtualMachine', name: 'v' }, ...(ttl ? { ttlDuration: ttl } : {}) } }) as never;
    assert.equal(pullTtlLeftMs(b(undefined, '2026-03-01T12:00:00Z'), Date.parse('2026-03-01T13:00:00Z')), 3_600_000);
    assert.equal(pullTtlLeftMs(b('30m', '2026-03-01T12:00:00Z'), Date.parse('2026-03-01T13:00:00Z')), -1_800_000);
    assert.equal(pullTtlLeftMs(b('30m'), 0), 1_800_000);
  });
  test('the utility volume name, GetName-shortened for long backups', () => {
    assert.equal(utilityVolumeNameOf('nightly'), 'nightly-backup-target-pvc');
    const long = 'n'.repeat(60);
    assert.equal(utilityVolumeNameOf(long), `${long.slice(0, 63 - 10 - 17)}-${fnv32aHex(long)}-backup-target-pvc`);
  });
});

describe('backup patches', () => {
  test('finalizer: test the old list (null when absent), then set the new one; nothing when already so', () => {
    assert.deepEqual(finalizerPatch(undefined, 'f', true), { type: 'json', ops: [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'add', path: '/metadata/finalizers', value: ['f'] }] });
    assert.deepEqual(finalizerPatch(['a', 'f'], 'f', false), { type: 'json', ops: [{ op: 'test', path: '/metadata/finalizers', value: ['a', 'f'] }, { op: 'replace', path: '/metadata/finalizers', value: ['a'] }] });
    assert.equal(finalizerPatch(['f'], 'f', true), undefined);
  });
  test('utility volume removal: the list goes when it would be empty', () => {
    const vmi = (uv: { name: string }[]) => ({ spec: { domain: { devices: {} }, utilityVolumes: uv } }) as never;
    const second = (p: Patch | undefined) => (p?.type === 'json' ? p.ops[1] : undefined);
    assert.deepEqual(second(removeUtilityVolumePatch(vmi([{ name: 'x' }]), 'x')), { op: 'remove', path: '/spec/utilityVolumes' });
    assert.deepEqual(second(removeUtilityVolumePatch(vmi([{ name: 'x' }, { name: 'y' }]), 'x')), { op: 'replace', path: '/spec/utilityVolumes', value: [{ name: 'y' }] });
    assert.equal(removeUtilityVolumePatch(vmi([{ name: 'y' }]), 'x'), undefined);
  });
});

describe('backup relay mapping', () => {
  test('backups by VM and by tracker; VMI status changes only; trackers needing redefinition; owned exports', () => {
    const map = backupMapper();
    const keys = (t: { key: string }[]) => t.map((x) => x.key).sort();
    const backup = (name: string, source: Record<string, unknown>) => ({ metadata: { name, namespace: 'ns' }, spec: { source } });
    assert.deepEqual(keys(map('VirtualMachineBackup', 'ADDED', backup('b-vm', { kind: 'VirtualMachine', name: 'vm' }))), ['ns/b-vm']);
    map('VirtualMachineBackup', 'ADDED', backup('b-trk', { kind: 'VirtualMachineBackupTracker', name: 't' }));
    assert.deepEqual(keys(map('VirtualMachineBackupTracker', 'ADDED', { metadata: { name: 't', namespace: 'ns' }, spec: { source: { kind: 'VirtualMachine', name: 'vm' } } })), ['ns/b-trk']);
    const vmi = (phase: string) => ({ metadata: { name: 'vm', namespace: 'ns' }, status: { phase } });
    assert.deepEqual(keys(map('VirtualMachineInstance', 'MODIFIED', vmi('Running'), vmi('Scheduled'))), ['ns/b-trk', 'ns/b-vm']);
    assert.deepEqual(keys(map('VirtualMachineInstance', 'MODIFIED', vmi('Running'), vmi('Running'))), [], 'no status change');
    const redefine = { metadata: { name: 't', namespace: 'ns' }, spec: { source: { kind: 'VirtualMachine', name: 'vm' } }, status: { checkpointRedefinitionRequired: true, latestCheckpoint: { name: 'cp' } } };
    assert.deepEqual(keys(map('VirtualMachineBackupTracker', 'MODIFIED', redefine)), ['ns/b-trk', 'ns/t']);
    const exp = (status: Record<string, unknown>) => ({ metadata: { name: 'b-vm', namespace: 'ns', ownerReferences: [{ apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackup', name: 'b-vm', uid: 'u', controller: true }] }, status });
    assert.deepEqual(keys(map('VirtualMachineExport', 'MODIFIED', exp({ phase: 'Ready' }), exp({ phase: 'Pending' }))), ['ns/b-vm']);
    assert.deepEqual(keys(map('VirtualMachineExport', 'MODIFIED', exp({ phase: 'Ready' }), exp({ phase: 'Ready' }))), []);
    map('VirtualMachineBackup', 'DELETED', backup('b-vm', { kind: 'VirtualMachine', name: 'vm' }));
    assert.deepEqual(keys(map('VirtualMachineInstance', 'MODIFIED', vmi('Failed'), vmi('Running'))), ['ns/b-trk']);
  });
});
