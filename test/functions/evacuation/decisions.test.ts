import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { hasDrainTaint, selectCandidates, vmisToConsider } from '../../../functions/evacuation/candidates.ts';
import { renderEvacuationMigration } from '../../../functions/evacuation/render-migration.ts';
import { migratesOnEviction } from '../../../shared/api/vmi-eviction.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
type VmiOpts = { strategy?: string; migratable?: boolean; phase?: string; evacuation?: string; node?: string; deleting?: boolean; migrating?: boolean; annotations?: Record<string, string> };
const vmi = (name: string, o: VmiOpts = {}): VirtualMachineInstance =>
  ({
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(o.deleting ? { deletionTimestamp: '2026-12-01T11:00:00Z' } : {}), ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: { ...(o.strategy ? { evictionStrategy: o.strategy } : {}) },
    status: {
      phase: o.phase ?? 'Running',
      nodeName: o.node ?? 'node01',
      ...(o.evacuation ? { evacuationNodeName: o.evacuation } : {}),
      conditions: o.migratable === false ? [] : [{ type: 'LiveMigratable', status: 'True' }],
      ...(o.migrating ? { migrationState: { startTimestamp: '2026-12-01T11:59:00Z' } } : {}),
    },
  }) as VirtualMachineInstance;
const tainted = (key = 'kubevirt.io/drain', effect = 'NoSchedule'): V1Node => ({ metadata: { name: 'node01' }, spec: { taints: [{ key, effect, value: 'anything' }] } });
const plainNode: V1Node = { metadata: { name: 'node01' } };

describe('eviction strategy → migrates on eviction', () => {
  const rows: [string | undefined, string | undefined, boolean, boolean][] = [
    ['LiveMigrate', undefined, false, true],
    ['LiveMigrateIfPossible', undefined, true, true],
    ['LiveMigrateIfPossible', undefined, false, false],
    ['External', undefined, true, false],
    ['None', 'LiveMigrate', true, false],
    [undefined, 'LiveMigrate', false, true],
    [undefined, undefined, true, false],
    ['Bogus', undefined, true, false],
  ];
  for (const [own, cluster, migratable, want] of rows) {
    test(`vmi ${own ?? 'unset'}, cluster ${cluster ?? 'unset'}, migratable ${migratable} → ${want}`, () => {
      assert.equal(migratesOnEviction(vmi('v', { ...(own ? { strategy: own } : {}), migratable }), cluster), want);
    });
  }
});

describe('which VMIs the evacuation controller considers', () => {
  test('the drain taint matches on key and NoSchedule effect, any value', () => {
    assert.equal(hasDrainTaint(tainted(), 'kubevirt.io/drain'), true);
    assert.equal(hasDrainTaint(tainted('kubevirt.io/drain', 'NoExecute'), 'kubevirt.io/drain'), false);
    assert.equal(hasDrainTaint(tainted('custom/drain'), 'custom/drain'), true);
  });
  test('tainted node: every VMI on it, marked or not, migrating or not', () => {
    const vmis = [vmi('a'), vmi('b', { migrating: true })];
    assert.deepEqual(vmisToConsider(tainted(), vmis, 'kubevirt.io/drain', NOW).map((v) => v.metadata?.name), ['a', 'b']);
  });
  test('untainted: marked for this node, still on it, not migrating', () => {
    const vmis = [vmi('unmarked'), vmi('marked', { evacuation: 'node01' }), vmi('moved', { evacuation: 'node02' }), vmi('migrating', { evacuation: 'node01', migrating: true })];
    assert.deepEqual(vmisToConsider(plainNode, vmis, 'kubevirt.io/drain', NOW).map((v) => v.metadata?.name), ['marked']);
  });
});

describe('evacuation filters', () => {
  const mig = (vmiName: string, phase: string): VirtualMachineInstanceMigration => ({ metadata: { name: `m-${vmiName}`, namespace: 'default' }, spec: { vmiName }, status: { phase } }) as VirtualMachineInstanceMigration;
  const launcher = (owner: string, phase = 'Running'): V1Pod => ({ metadata: { namespace: 'default', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: owner, uid: `uid-${owner}`, controller: true }] }, status: { phase } });
  test('final, deleting, non-migrating-on-eviction, already migrating or with two live pods are skipped; non-migratable are set aside', () => {
    const vmis = [
      vmi('ok', { strategy: 'LiveMigrate' }),
      vmi('final', { strategy: 'LiveMigrate', phase: 'Failed' }),
      vmi('deleting', { strategy: 'LiveMigrate', deleting: true }),
      vmi('none', { strategy: 'None' }),
      vmi('not-migratable', { strategy: 'LiveMigrate', migratable: false }),
      vmi('has-vmim', { strategy: 'LiveMigrate' }),
      vmi('old-vmim-done', { strategy: 'LiveMigrate' }),
      vmi('two-pods', { strategy: 'LiveMigrate' }),
      vmi('scheduled', { strategy: 'LiveMigrate', phase: 'Scheduled' }),
    ];
    const unfinished = [mig('has-vmim', 'Pending'), mig('old-vmim-done', 'Succeeded')];
    const pods = [launcher('ok'), launcher('two-pods'), launcher('two-pods'), launcher('old-vmim-done'), launcher('old-vmim-done', 'Succeeded')];
    const got = selectCandidates(vmis, unfinished, pods, undefined);
    assert.deepEqual(got.candidates.map((v) => v.metadata?.name), ['ok', 'old-vmim-done', 'scheduled'], 'the phase is not checked (Scheduled qualifies)');
    assert.deepEqual(got.nonMigratable.map((v) => v.metadata?.name), ['not-migratable']);
  });
  test('the migration: generateName, node annotation, priority by eviction source', () => {
    const m = renderEvacuationMigration(vmi('a'), 'node01');
    assert.equal(m.metadata?.generateName, 'kubevirt-evacuation-');
    assert.deepEqual(m.metadata?.annotations, { 'kubevirt.io/evacuationMigration': 'node01' });
    assert.equal(m.metadata?.labels, undefined);
    assert.deepEqual(m.spec, { vmiName: 'a', priority: 'system-critical' });
    assert.equal(renderEvacuationMigration(vmi('d', { annotations: { 'kubevirt.io/eviction-source': 'descheduler' } }), 'node01').spec?.priority, 'system-maintenance');
  });
});
