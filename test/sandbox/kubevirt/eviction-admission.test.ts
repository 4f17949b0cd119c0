import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { admitEviction } from '../../../sandbox/kubevirt/eviction-admission.ts';

const launcher = (extra: { phase?: string; node?: string; noDomain?: boolean; app?: string } = {}) => ({
  metadata: { name: 'virt-launcher-v-abcde', namespace: 'default', labels: { 'kubevirt.io': extra.app ?? 'virt-launcher' }, annotations: (extra.noDomain ? {} : { 'kubevirt.io/domain': 'v' }) as Record<string, string> },
  spec: { nodeName: extra.node ?? 'node01' },
  status: { phase: extra.phase ?? 'Running' },
});
const vmi = (strategy: string | undefined, o: { migratable?: boolean; marked?: boolean; node?: string } = {}): VirtualMachineInstance =>
  ({
    metadata: { name: 'v', namespace: 'default' },
    spec: strategy ? { evictionStrategy: strategy } : {},
    status: { nodeName: o.node ?? 'node01', ...(o.marked ? { evacuationNodeName: 'node01' } : {}), conditions: o.migratable === false ? [] : [{ type: 'LiveMigratable', status: 'True' }] },
  }) as VirtualMachineInstance;

test('virt-api eviction admission, by strategy and state', () => {
  const MARK = 'Eviction triggered evacuation of VMI "default/v"';
  const rows: [string, ReturnType<typeof launcher>, VirtualMachineInstance | undefined, string | undefined, string, string?][] = [
    ['LiveMigrate, migratable: mark and refuse', launcher(), vmi('LiveMigrate'), undefined, 'mark', MARK],
    ['LiveMigrate, not migratable: refuse', launcher(), vmi('LiveMigrate', { migratable: false }), undefined, 'deny', 'VMI v is configured with an eviction strategy but is not live-migratable'],
    ['LiveMigrateIfPossible, migratable: mark', launcher(), vmi('LiveMigrateIfPossible'), undefined, 'mark', MARK],
    ['LiveMigrateIfPossible, not migratable: evict', launcher(), vmi('LiveMigrateIfPossible', { migratable: false }), undefined, 'allow'],
    ['External: mark even when not migratable', launcher(), vmi('External', { migratable: false }), undefined, 'mark', MARK],
    ['None: evict', launcher(), vmi('None'), 'LiveMigrate', 'allow'],
    ['no strategy, cluster LiveMigrate: mark', launcher(), vmi(undefined), 'LiveMigrate', 'mark', MARK],
    ['no strategy at all: evict', launcher(), vmi(undefined), undefined, 'allow'],
    ['already marked: refuse, evacuation in progress', launcher(), vmi('LiveMigrate', { marked: true }), undefined, 'deny', `Evacuation in progress: ${MARK}`],
    ['the migration target pod: refuse', launcher({ node: 'node02' }), vmi('LiveMigrate'), undefined, 'deny', 'Eviction request for target Pod'],
    ['a finished launcher: evict', launcher({ phase: 'Succeeded' }), vmi('LiveMigrate'), undefined, 'allow'],
    ['no domain annotation: evict', launcher({ noDomain: true }), vmi('LiveMigrate'), undefined, 'allow'],
    ['not a launcher: evict', launcher({ app: 'something' }), vmi('LiveMigrate'), undefined, 'allow'],
    ['VMI gone: evict', launcher(), undefined, undefined, 'allow'],
  ];
  for (const [name, pod, v, cluster, kind, message] of rows) {
    const got = admitEviction(pod, v, {}, cluster);
    assert.equal(got.kind, kind, name);
    if (message) assert.equal('message' in got ? got.message : undefined, message, name);
  }
});

test('the mark: evacuationNodeName is the pod node; a descheduler eviction also sets the eviction source', () => {
  const plain = admitEviction(launcher(), vmi('LiveMigrate'), {}, undefined);
  assert.deepEqual(plain.kind === 'mark' && plain.patch, [{ op: 'add', path: '/status/evacuationNodeName', value: 'node01' }]);
  const desched = admitEviction(launcher(), vmi('LiveMigrate'), { metadata: { annotations: { 'requested-by': 'sigs.k8s.io/descheduler' } } }, undefined);
  assert.deepEqual(desched.kind === 'mark' && desched.patch[1], { op: 'add', path: '/metadata/annotations', value: { 'kubevirt.io/eviction-source': 'descheduler' } });
});
