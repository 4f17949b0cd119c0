import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { batchSettingsOf, evictionBatch, migrationCount, parseDuration } from '../../../functions/workload-updater/batch.ts';
import { classify, isOutdated, isRolloutComplete, shouldAbort } from '../../../functions/workload-updater/classify.ts';
import { renderWorkloadUpdateMigration } from '../../../functions/workload-updater/render-migration.ts';
import { isVolumeMigration } from '../../../functions/workload-updater/volume-migration.ts';
import { isReadWriteOnce, volumeMigrationProblem } from '../../../shared/storage/volume-migration.ts';
import { isRunningMigration } from '../../../shared/api/vmi-eviction.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const NEW = 'quay.io/kubevirt/virt-launcher:v1.9.1';
const OLD = 'quay.io/kubevirt/virt-launcher:v1.9.0';
type Opts = { image?: string; phase?: string; migratable?: boolean; conditions?: { type: string; status: string }[]; annotations?: Record<string, string>; migrating?: boolean; domainReady?: boolean; deleting?: boolean };
const vmi = (name: string, o: Opts = {}): VirtualMachineInstance =>
  ({
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(o.annotations ? { annotations: o.annotations } : {}), ...(o.deleting ? { deletionTimestamp: '2026-12-01T11:00:00Z' } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.image === '' ? {} : { launcherContainerImageVersion: o.image ?? OLD }),
      conditions: [...(o.migratable === false ? [] : [{ type: 'LiveMigratable', status: 'True' }]), ...(o.conditions ?? [])],
      ...(o.migrating || o.domainReady ? { migrationState: { ...(o.migrating ? { startTimestamp: '2026-12-01T11:59:00Z' } : {}), ...(o.domainReady ? { targetNodeDomainReadyTimestamp: '2026-12-01T11:59:30Z' } : {}) } } : {}),
    },
  }) as VirtualMachineInstance;
const mig = (vmiName: string, phase: string, workloadUpdate = true, spec: object = {}): VirtualMachineInstanceMigration =>
  ({ metadata: { name: `m-${vmiName}`, namespace: 'default', ...(workloadUpdate ? { annotations: { 'kubevirt.io/workloadUpdateMigration': '' } } : {}) }, spec: { vmiName, ...spec }, status: { phase } }) as VirtualMachineInstanceMigration;
const both = { liveMigrate: true, evict: true };

describe('outdated launchers', () => {
  const rows: [string, VirtualMachineInstance, boolean][] = [
    ['old image', vmi('a'), true],
    ['current image', vmi('a', { image: NEW }), false],
    ['unknown (empty) version is never outdated', vmi('a', { image: '' }), false],
    ['final VMIs are not outdated', vmi('a', { phase: 'Succeeded' }), false],
    ['a digest is not the tag (string comparison)', vmi('a', { image: 'quay.io/kubevirt/virt-launcher@sha256:abc' }), true],
  ];
  for (const [name, v, want] of rows) test(name, () => assert.equal(isOutdated(v, NEW), want));
});

describe('classification', () => {
  test('migratable → migrate, others → evict (both methods); moving or already-migrated ones only counted', () => {
    const vmis = [vmi('mig'), vmi('nomig', { migratable: false }), vmi('current', { image: NEW }), vmi('moving', { migrating: true }), vmi('has-vmim'), vmi('scheduled', { phase: 'Scheduled' }), vmi('deleting', { deleting: true })];
    const c = classify(vmis, [mig('has-vmim', 'Pending')], both, NEW, NOW);
    assert.deepEqual(c.allOutdated.map((v) => v.metadata?.name), ['mig', 'nomig', 'moving', 'has-vmim']);
    assert.deepEqual(c.migratable.map((v) => v.metadata?.name), ['mig']);
    assert.deepEqual(c.evict.map((v) => v.metadata?.name), ['nomig']);
  });
  test('methods: LiveMigrate alone leaves non-migratable ones; Evict alone evicts even migratable ones; none only counts', () => {
    const vmis = [vmi('mig'), vmi('nomig', { migratable: false })];
    const names = (l: VirtualMachineInstance[]) => l.map((v) => v.metadata?.name);
    const lm = classify(vmis, [], { liveMigrate: true, evict: false }, NEW, NOW);
    assert.deepEqual([names(lm.migratable), names(lm.evict)], [['mig'], []]);
    const ev = classify(vmis, [], { liveMigrate: false, evict: true }, NEW, NOW);
    assert.deepEqual([names(ev.migratable), names(ev.evict)], [[], ['mig', 'nomig']]);
    const none = classify(vmis, [], { liveMigrate: false, evict: false }, NEW, NOW);
    assert.deepEqual([none.allOutdated.length, none.migratable.length, none.evict.length], [2, 0, 0]);
  });
  test('a hot-plug that needs a migration counts as outdated even on the current launcher', () => {
    const c = classify([vmi('cpu', { image: NEW, conditions: [{ type: 'HotVCPUChange', status: 'False' }] })], [], both, NEW, NOW);
    assert.deepEqual(c.migratable.map((v) => v.metadata?.name), ['cpu']);
    assert.equal(renderWorkloadUpdateMigration(c.migratable[0]!).spec?.priority, 'user-triggered');
  });
  test('abort: a workload-update migration whose change went away, unless its target domain is ready', () => {
    const migrations = [mig('gone', 'Scheduling'), mig('ready', 'Running'), mig('asked', 'Pending'), mig('not-ours', 'Pending', false)];
    assert.equal(shouldAbort(vmi('gone', { image: NEW }), migrations), true);
    assert.equal(shouldAbort(vmi('ready', { image: NEW, domainReady: true }), migrations), false);
    assert.equal(shouldAbort(vmi('asked', { annotations: { 'kubevirt.io/testWorkloadUpdateMigrationAbortion': '' }, conditions: [{ type: 'MigrationRequired', status: 'True' }] }), migrations), true);
    assert.equal(shouldAbort(vmi('not-ours', { image: NEW }), migrations), false);
    // An outdated VMI is never aborted: its migration is the update itself.
    const c = classify([vmi('gone'), vmi('gone2', { image: NEW })], [mig('gone', 'Pending'), mig('gone2', 'Pending')], both, NEW, NOW);
    assert.deepEqual(c.abort.map((v) => v.metadata?.name), ['gone2']);
  });
  test('running migrations (KubeVirt IsRunning) make the budget', () => {
    const rows: [string, object, boolean][] = [['', {}, false], ['Pending', {}, false], ['Scheduling', {}, true], ['Scheduling', { sendTo: {} }, false], ['Running', {}, true], ['Succeeded', {}, false], ['SomethingNew', {}, true]];
    for (const [phase, spec, want] of rows) assert.equal(isRunningMigration(mig('x', phase, true, spec)), want, `${phase} ${JSON.stringify(spec)}`);
    assert.equal(classify([], [mig('a', 'Running'), mig('b', 'Pending'), mig('c', 'Scheduled')], both, NEW, NOW).activeMigrations, 2);
  });
  test('rollout gate: only a Deployed KubeVirt whose deployment ids agree', () => {
    const kv = (phase: string, observed: string, target: string) => ({ status: { phase, observedDeploymentID: observed, targetDeploymentID: target } }) as KubeVirt;
    assert.equal(isRolloutComplete(kv('Deployed', 'a', 'a')), true);
    assert.equal(isRolloutComplete(kv('Deploying', 'a', 'b')), false);
    assert.equal(isRolloutComplete(kv('Deployed', 'a', 'b')), false);
  });
});

describe('volume migrations (VolumesChange with status.migratedVolumes)', () => {
  type Vol = { name: string; modes?: string[] };
  /** A non-LiveMigratable VMI on the current launcher whose volumes change: only a volume migration moves it. */
  const volVmi = (migrated: string[], volumes: Vol[], extra: { type: string; status: string; message?: string }[] = []) => {
    const v = vmi('vol', { image: NEW, migratable: false, conditions: [{ type: 'VolumesChange', status: 'True' }, ...extra] });
    v.status!.migratedVolumes = migrated.map((volumeName) => ({ volumeName }));
    v.status!.volumeStatus = volumes.map((x) => ({ name: x.name, target: '', ...(x.modes ? { persistentVolumeClaimInfo: { claimName: `pvc-${x.name}`, accessModes: x.modes as never } } : {}) }));
    return v;
  };
  const rwo = ['ReadWriteOnce'];
  const rows: [string, VirtualMachineInstance, string | undefined][] = [
    ['every RWO claim migrated: valid', volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'containerdisk' }]), undefined],
    ['an RWO claim left behind: invalid', volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'data', modes: rwo }]), 'cannot migrate the VM. The volume data is RWO and not included in the migration volumes'],
    ['ReadWriteOncePod counts as RWO', volVmi([], [{ name: 'data', modes: ['ReadWriteOncePod'] }]), 'cannot migrate the VM. The volume data is RWO and not included in the migration volumes'],
    ['a shared (RWX) claim may stay', volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'shared', modes: ['ReadWriteMany', 'ReadWriteOnce'] }]), undefined],
    ['the backend-storage volume is exempt', volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'persistent-state-for-vol', modes: rwo }]), undefined],
    ['StorageLiveMigratable False: invalid', volVmi(['disk'], [{ name: 'disk', modes: rwo }], [{ type: 'StorageLiveMigratable', status: 'False', message: 'disks of type hostDisk' }]), "cannot migrate the volumes as the VMI isn't migratable: disks of type hostDisk"],
    ['the backend entry persistent-state-for-this-vm is exempt too', volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'persistent-state-for-this-vm', modes: rwo }]), undefined],
  ];
  for (const [name, v, want] of rows) test(name, () => assert.equal(volumeMigrationProblem(v, (v.status?.migratedVolumes ?? []).map((m) => m.volumeName)), want));
  test('RWO (KubeVirt\'s IsReadWriteOnceAccessMode): any claim without a shared mode, none listed included', () => {
    const modes: [string[] | undefined, boolean][] = [[['ReadWriteOnce'], true], [['ReadWriteOncePod'], true], [['ReadWriteMany'], false], [['ReadOnlyMany', 'ReadWriteOnce'], false], [[], true], [undefined, true]];
    for (const [m, want] of modes) assert.equal(isReadWriteOnce(m), want, JSON.stringify(m));
  });
  test('a valid volume migration is migrated though not LiveMigratable; an invalid one or none is evicted (both methods) or left', () => {
    // arrange
    const valid = volVmi(['disk'], [{ name: 'disk', modes: rwo }]);
    const invalid = volVmi(['disk'], [{ name: 'disk', modes: rwo }, { name: 'data', modes: rwo }]);
    const none = volVmi([], [{ name: 'containerdisk' }]);
    const rows: [string, VirtualMachineInstance, { liveMigrate: boolean; evict: boolean }, 'migratable' | 'evict' | 'none'][] = [
      ['valid, LiveMigrate', valid, { liveMigrate: true, evict: false }, 'migratable'],
      ['valid, Evict only', valid, { liveMigrate: false, evict: true }, 'evict'],
      ['invalid, both', invalid, both, 'evict'],
      ['invalid, LiveMigrate only', invalid, { liveMigrate: true, evict: false }, 'none'],
      ['no migrated volumes, LiveMigrate only', none, { liveMigrate: true, evict: false }, 'none'],
    ];
    for (const [name, v, methods, want] of rows) {
      // act
      const c = classify([v], [], methods, NEW, NOW);
      // assert
      const got = c.migratable.length ? 'migratable' : c.evict.length ? 'evict' : 'none';
      assert.equal(got, want, name);
      assert.equal(c.allOutdated.length, 1, `${name}: counted`);
    }
    assert.equal(isVolumeMigration(valid), true);
    assert.equal(renderWorkloadUpdateMigration(valid).spec?.priority, 'user-triggered');
    assert.deepEqual(renderWorkloadUpdateMigration(valid).metadata?.labels, { 'kubevirt.io/volume-update-migration': 'vol' });
  });
});

describe('batches and budget', () => {
  const s = { size: 10, intervalMs: 60_000 };
  const rows: [string, number, number | undefined, number, number][] = [
    ['first batch at once (no batch yet)', 25, undefined, NOW, 10],
    ['within the interval: none', 25, NOW - 30_000, NOW, 0],
    ['exactly at the interval: none (strictly after)', 25, NOW - 60_000, NOW, 0],
    ['after the interval: the next batch', 25, NOW - 60_001, NOW, 10],
    ['fewer left than a batch', 3, undefined, NOW, 3],
    ['nothing to evict starts no batch', 0, undefined, NOW, 0],
  ];
  for (const [name, evictable, last, now, want] of rows) test(name, () => assert.equal(evictionBatch(evictable, last, s, now).count, want));
  test('size 0 still starts a batch (and so advances lastDeletionBatch)', () => {
    assert.deepEqual(evictionBatch(5, undefined, { size: 0, intervalMs: 60_000 }, NOW), { count: 0, startedAtMs: NOW });
  });
  test('settings: defaults 10 / 60 s; Go durations; negative size is 0; bad duration is a clear error', () => {
    assert.deepEqual(batchSettingsOf({} as KubeVirt), { size: 10, intervalMs: 60_000 });
    assert.deepEqual(batchSettingsOf({ spec: { workloadUpdateStrategy: { batchEvictionSize: -3, batchEvictionInterval: '1m30s' } } } as KubeVirt), { size: 0, intervalMs: 90_000 });
    assert.equal(parseDuration('500ms', 'f'), 500);
    assert.throws(() => parseDuration('soon', 'spec.workloadUpdateStrategy.batchEvictionInterval'), /batchEvictionInterval: not a duration: 'soon'/);
  });
  test('new migrations = min(what the running ones leave of 5, candidates)', () => {
    assert.equal(migrationCount(20, 0, 5), 5);
    assert.equal(migrationCount(20, 3, 5), 2);
    assert.equal(migrationCount(20, 7, 5), 0);
    assert.equal(migrationCount(1, 0, 5), 1);
  });
  test('the migration object', () => {
    const m = renderWorkloadUpdateMigration(vmi('a'));
    assert.equal(m.metadata?.generateName, 'kubevirt-workload-update-');
    assert.deepEqual(m.metadata?.annotations, { 'kubevirt.io/workloadUpdateMigration': '' });
    assert.equal(m.metadata?.labels, undefined);
    assert.equal(m.spec?.priority, 'system-critical');
    const long = 'v'.repeat(64);
    const vol = renderWorkloadUpdateMigration(vmi(long, { conditions: [{ type: 'VolumesChange', status: 'True' }] }));
    assert.deepEqual(vol.metadata?.labels, { 'kubevirt.io/volume-update-migration': `uid-${long}` });
  });
});
