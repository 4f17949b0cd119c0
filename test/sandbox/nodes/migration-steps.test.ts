import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_MIGRATION_TIMINGS, nextMigrationStep, type MigrationInputs } from '../../../sandbox/nodes/migration-steps.ts';
import { launcherExit } from '../../../sandbox/nodes/launcher-exit.ts';
import type { MigrationState, Pod, Vmi } from '../../../sandbox/nodes/objects.ts';

const running = (name: string, node: string): Pod => ({ metadata: { name, namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' } }, spec: { nodeName: node }, status: { phase: 'Running', podIP: '10.244.2.2' } });
const vmi = (ms: MigrationState | undefined, labels: Record<string, string> = {}): Vmi => ({
  metadata: { name: 'v', namespace: 'default', uid: 'u', labels },
  status: { phase: 'Running', nodeName: 'node01', ...(ms ? { migrationState: ms } : {}) },
});
const handedOff: MigrationState = { migrationUid: 'm1', targetNode: 'node02', sourceNode: 'node01', targetPod: 'target', sourcePod: 'source' };
const input = (v: Vmi, extra: Partial<MigrationInputs> = {}): MigrationInputs => ({
  vmi: v,
  targetPod: running('target', 'node02'),
  nodeAddress: (n) => (n === 'node02' ? '192.168.66.102' : undefined),
  failWith: undefined,
  nowIso: '2026-01-01T00:00:00Z',
  timings: DEFAULT_MIGRATION_TIMINGS,
  targetInterfaces: () => [],
  ...extra,
});

describe('migration steps (what the handlers do after hand-off)', () => {
  const table: { name: string; ms: MigrationState | undefined; extra?: Partial<MigrationInputs>; labels?: Record<string, string>; want: string | undefined }[] = [
    { name: 'no migration state: nothing', ms: undefined, want: undefined },
    { name: 'not handed off (no target pod name): nothing', ms: { migrationUid: 'm1' }, want: undefined },
    { name: 'target pod not running yet: wait', ms: handedOff, extra: { targetPod: undefined }, want: undefined },
    { name: 'handed off: prepare target', ms: handedOff, want: 'prepare-target' },
    { name: 'target ready: source starts', ms: { ...handedOff, targetNodeAddress: '1.2.3.4' }, want: 'start' },
    { name: 'started: target domain ready', ms: { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't' }, want: 'target-domain-ready' },
    { name: 'domain ready: complete', ms: { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't', targetNodeDomainDetected: true }, want: 'complete' },
    { name: 'test hook: fail', ms: { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't' }, extra: { failWith: 'boom' }, want: 'fail' },
    { name: 'target pod gone mid-flight: fail', ms: { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't' }, extra: { targetPod: undefined }, want: 'fail' },
    { name: 'abort requested', ms: { ...handedOff, abortRequested: true }, want: 'abort' },
    { name: 'completed: relabel', ms: { ...handedOff, completed: true }, labels: { 'kubevirt.io/migrationTargetNodeName': 'node02' }, want: 'relabel' },
    { name: 'completed and relabelled: nothing', ms: { ...handedOff, completed: true }, labels: { 'kubevirt.io/nodeName': 'node02' }, want: undefined },
  ];
  for (const c of table) {
    test(c.name, () => {
      // act
      const step = nextMigrationStep(input(vmi(c.ms, c.labels), c.extra));
      // assert
      assert.equal(step?.step, c.want);
    });
  }

  test('completion moves status.nodeName to the target', () => {
    const step = nextMigrationStep(input(vmi({ ...handedOff, targetNodeAddress: 'a', startTimestamp: 't', targetNodeDomainDetected: true })));
    assert.equal(step?.status?.nodeName, 'node02');
    assert.deepEqual((step?.status?.migrationState as MigrationState).completed, true);
  });
});

describe('launcher exit', () => {
  const done = (ms: MigrationState): Vmi => ({ ...vmi(ms), status: { phase: 'Running', nodeName: 'node02', migrationState: ms } });
  const table: { name: string; pod: Pod; vmi: Vmi | undefined; want: string | undefined }[] = [
    { name: 'VMI gone', pod: running('source', 'node01'), vmi: undefined, want: 'Succeeded' },
    { name: 'VMI running', pod: running('source', 'node01'), vmi: vmi(undefined), want: undefined },
    { name: 'VMI failed', pod: running('source', 'node01'), vmi: { ...vmi(undefined), status: { phase: 'Failed' } }, want: 'Failed' },
    { name: 'source of completed migration', pod: running('source', 'node01'), vmi: done({ ...handedOff, completed: true }), want: 'Succeeded' },
    { name: 'target of completed migration keeps running', pod: running('target', 'node02'), vmi: done({ ...handedOff, completed: true }), want: undefined },
    { name: 'target of failed migration', pod: running('target', 'node02'), vmi: done({ ...handedOff, completed: true, failed: true }), want: 'Succeeded' },
    { name: 'source of failed migration keeps running', pod: running('source', 'node01'), vmi: done({ ...handedOff, completed: true, failed: true }), want: undefined },
    {
      name: "a later migration's target pod back on this migration's source node keeps running",
      pod: { ...running('target-2', 'node01'), metadata: { name: 'target-2', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/migrationJobUID': 'm2' } } },
      vmi: done({ ...handedOff, completed: true }),
      want: undefined,
    },
  ];
  for (const c of table) {
    test(c.name, () => assert.equal(launcherExit(c.pod, c.vmi)?.phase, c.want));
  }
});

describe('hotplug applied by the target handler on completion (reference-vm-vmi-depth §5)', () => {
  const ready: MigrationState = { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't', targetNodeDomainDetected: true };
  const hot = (conditions: { type: string; status: string }[]): Vmi => ({
    metadata: { name: 'v', namespace: 'default', uid: 'u' },
    spec: { domain: { cpu: { sockets: 3, cores: 1, threads: 1 }, memory: { guest: '4Gi' } } },
    status: { phase: 'Running', nodeName: 'node01', migrationState: ready, conditions, memory: { guestAtBoot: '2Gi', guestCurrent: '2Gi', guestRequested: '2Gi' } },
  });
  const table: { name: string; conditions: { type: string; status: string }[]; failMemory?: boolean; want: Record<string, unknown> }[] = [
    { name: 'no hotplug: nothing extra', conditions: [{ type: 'LiveMigratable', status: 'True' }], want: {} },
    {
      name: 'CPU: the topology from the spec, HotVCPUChange gone',
      conditions: [{ type: 'LiveMigratable', status: 'True' }, { type: 'HotVCPUChange', status: 'True' }],
      want: { currentCPUTopology: { sockets: 3, cores: 1, threads: 1 }, conditions: [{ type: 'LiveMigratable', status: 'True' }] },
    },
    {
      name: 'memory: guestRequested and guestCurrent from the spec, HotMemoryChange gone',
      conditions: [{ type: 'HotMemoryChange', status: 'True' }],
      want: { memory: { guestAtBoot: '2Gi', guestCurrent: '4Gi', guestRequested: '4Gi' }, conditions: [] },
    },
    {
      name: 'memory refused (test hook): HotMemoryChange=False',
      conditions: [{ type: 'HotMemoryChange', status: 'True' }],
      failMemory: true,
      want: { conditions: [{ type: 'HotMemoryChange', status: 'False', reason: 'MemoryHotplugFailed', message: 'memory hotplug failed (sandbox test hook)', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    },
  ];
  for (const c of table) {
    test(c.name, () => {
      // act
      const step = nextMigrationStep(input(hot(c.conditions), { failMemoryHotplug: c.failMemory }));
      // assert
      assert.equal(step?.step, 'complete');
      const got = Object.fromEntries(Object.entries(step?.status ?? {}).filter(([k]) => ['currentCPUTopology', 'memory', 'conditions'].includes(k)));
      assert.deepEqual(got, c.want);
    });
  }
});

describe('a volume migration finished by the target handler on completion (reference-vm-vmi-depth §7)', () => {
  const ready: MigrationState = { ...handedOff, targetNodeAddress: 'a', startTimestamp: 't', targetNodeDomainDetected: true };
  const migrated = [{ volumeName: 'data', sourcePVCInfo: { claimName: 'src', accessModes: ['ReadWriteOnce'] }, destinationPVCInfo: { claimName: 'dst', accessModes: ['ReadWriteMany'] } }];
  const withVolumes = (status: Record<string, unknown>): Vmi => ({ metadata: { name: 'v', namespace: 'default', uid: 'u' }, status: { phase: 'Running', nodeName: 'node01', migrationState: ready, ...status } });
  const table: { name: string; vmi: Vmi; want: Record<string, unknown> }[] = [
    {
      name: 'VolumesChange and migratedVolumes gone (the hotplug condition too, in the same list)',
      vmi: withVolumes({ migratedVolumes: migrated, conditions: [{ type: 'LiveMigratable', status: 'True' }, { type: 'VolumesChange', status: 'True', message: 'migrate volumes' }, { type: 'HotVCPUChange', status: 'True' }] }),
      want: { conditions: [{ type: 'LiveMigratable', status: 'True' }], migratedVolumes: null },
    },
    {
      name: 'a volume-status entry of the source claim now describes the destination',
      vmi: withVolumes({ migratedVolumes: migrated, conditions: [{ type: 'VolumesChange', status: 'True' }], volumeStatus: [{ name: 'data', target: 'vdb', persistentVolumeClaimInfo: { claimName: 'src' } }, { name: 'other', target: 'vdc' }] }),
      want: { conditions: [], migratedVolumes: null, volumeStatus: [{ name: 'data', target: 'vdb', persistentVolumeClaimInfo: { claimName: 'dst', accessModes: ['ReadWriteMany'] } }, { name: 'other', target: 'vdc' }] },
    },
    { name: 'no volume migration: nothing extra', vmi: withVolumes({ conditions: [{ type: 'LiveMigratable', status: 'True' }] }), want: {} },
  ];
  for (const c of table) {
    test(c.name, () => {
      // act
      const step = nextMigrationStep(input(c.vmi));
      // assert
      assert.equal(step?.step, 'complete');
      const got = Object.fromEntries(Object.entries(step?.status ?? {}).filter(([k]) => ['conditions', 'migratedVolumes', 'volumeStatus'].includes(k)));
      assert.deepEqual(got, c.want);
    });
  }
});
