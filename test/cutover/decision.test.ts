/**
 * Shadow mode's judge, pure parts (docs/cutover.md): the normalisations, how a dry-run write
 * becomes a decision and is held against a live object, and the fence's write mode from a Lease.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decisionOf, diffDecision } from '../../shared/cutover/decision.ts';
import { writeModeOf } from '../../shared/cutover/gate.ts';
import { viewOf, WRITABLE_AFTER, HANDING_BACK, microTime } from '../../shared/cutover/lease.ts';
import { normalise } from '../../shared/cutover/normalise.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import type { ShadowWrite } from '../../shared/kube/guarded-writes.ts';

const UID = '0b6e2f0a-3c1d-4f5e-9a8b-7c6d5e4f3a2b';

test('normalise: times, UIDs (values and keys), random suffixes, server fields and our annotations', () => {
  // arrange
  const obj = {
    metadata: { name: 'virt-launcher-a-x7k2p', uid: UID, resourceVersion: '9', annotations: { 'virt-reconciler.io/x': '1', keep: 'y' } },
    status: { activePods: { [UID]: 'node01' }, conditions: [{ type: 'Ready', lastTransitionTime: '2026-12-06T08:00:00Z' }], migrationState: { startTimestamp: '2026-12-06T08:00:00.123456Z', targetPod: 'virt-launcher-a-bcdfg' } },
  };
  // act
  const n = normalise(obj);
  // assert
  assert.deepEqual(n, {
    metadata: { name: 'virt-launcher-a-<rand>', annotations: { keep: 'y' } },
    status: { activePods: { '<uid>': 'node01' }, conditions: [{ type: 'Ready' }], migrationState: { targetPod: 'virt-launcher-a-<rand>' } },
  });
});

const write = (w: Partial<ShadowWrite>): ShadowWrite => ({ verb: 'patch', method: 'patch', resource: VMIS, namespace: 'default', name: 'a', body: {}, answer: { result: {} }, ...w }) as ShadowWrite;

const CASES: { name: string; w: ShadowWrite; live: unknown; diffs: string[] }[] = [
  { name: 'merge patch agrees', w: write({ body: { status: { phase: 'Scheduling' } }, patchType: 'merge' }), live: { status: { phase: 'Scheduling', nodeName: 'n1' } }, diffs: [] },
  { name: 'merge patch differs on its field only', w: write({ body: { status: { phase: 'Scheduling' } }, patchType: 'merge' }), live: { status: { phase: 'Running' } }, diffs: ['status.phase'] },
  { name: 'merge patch null = absent', w: write({ body: { metadata: { labels: { x: null } } }, patchType: 'merge' }), live: { metadata: { labels: { x: '1' } } }, diffs: ['metadata.labels.x'] },
  { name: 'a label the live object lacks is named, not the map', w: write({ body: { metadata: { labels: { x: '' } } }, patchType: 'merge' }), live: { metadata: {} }, diffs: ['metadata.labels.x'] },
  { name: 'json patch add/replace/remove', w: write({ body: [{ op: 'test', path: '/a', value: 1 }, { op: 'replace', path: '/status/phase', value: 'Failed' }, { op: 'remove', path: '/metadata/finalizers' }], patchType: 'json' }), live: { status: { phase: 'Failed' }, metadata: { finalizers: ['f'] } }, diffs: ['metadata.finalizers'] },
  { name: 'create judged on the dry run answer, containers element-wise', w: write({ verb: 'create', method: 'create', resource: PODS, name: undefined, generateName: 'virt-launcher-a-', answer: { result: { metadata: { name: 'virt-launcher-a-zzzzz', labels: { k: 'v' } }, spec: { containers: [{ name: 'compute', image: 'ours' }] }, status: { phase: 'Pending' } } } }), live: { metadata: { name: 'virt-launcher-a-qqqqq', labels: { k: 'v' } }, spec: { nodeName: 'n1', containers: [{ name: 'compute', image: 'theirs' }] }, status: { phase: 'Running' } }, diffs: ['spec.containers.0.image'] },
  { name: 'a quantity in another unit is the same amount', w: write({ body: { status: { migrationState: { targetMemoryOverhead: '302252032', bandwidth: '0Mi' } } }, patchType: 'merge' }), live: { status: { migrationState: { targetMemoryOverhead: '295168Ki', bandwidth: '0' } } }, diffs: [] },
  { name: 'false, 0 and "" are absent (omitempty), but not a label\'s ""', w: write({ body: { status: { ready: false, readyReplicas: 0, reason: '' }, metadata: { labels: { outdated: '' } } }, patchType: 'merge' }), live: { status: {}, metadata: {} }, diffs: ['metadata.labels.outdated'] },
  { name: "the launcher's --qemu-timeout jitter", w: write({ verb: 'create', method: 'create', resource: PODS, name: undefined, generateName: 'virt-launcher-a-', answer: { result: { spec: { containers: [{ args: ['--qemu-timeout', '355s', '--name', 'a'] }] } } } }), live: { spec: { containers: [{ args: ['--qemu-timeout', '292s', '--name', 'a'] }] } }, diffs: [] },
  { name: 'conditions in another order', w: write({ body: { status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }] } }, patchType: 'merge' }), live: { status: { conditions: [{ type: 'LiveMigratable', status: 'True' }, { type: 'Ready', status: 'True' }] } }, diffs: [] },
  { name: 'delete agrees with a terminating object', w: write({ verb: 'delete', method: 'delete' }), live: { metadata: { deletionTimestamp: '2026-12-06T08:00:00Z' } }, diffs: [] },
  { name: 'delete diverges from a live object', w: write({ verb: 'delete', method: 'delete' }), live: { metadata: {} }, diffs: ['(object)'] },
];

for (const c of CASES) {
  test(`decision: ${c.name}`, () => {
    // arrange
    const d = decisionOf(c.w);
    assert.ok(d, 'a decision');
    // act
    const diffs = diffDecision(d.expectation, c.live);
    // assert
    assert.deepEqual(diffs.map((x) => x.path), c.diffs, JSON.stringify(diffs));
  });
}

test('decision: Events and refused writes are not compared', () => {
  // arrange + act + assert
  assert.equal(decisionOf(write({ resource: { ...VMIS, plural: 'events', kind: 'Event' } })), undefined);
  assert.equal(decisionOf(write({ answer: { error: new Error('409') } })), undefined);
});

const NOW = Date.parse('2026-12-06T09:00:00Z');
const lease = (holder: string, renewedAgoMs: number, annotations: Record<string, string> = {}) => viewOf({ metadata: { annotations }, spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: microTime(NOW - renewedAgoMs) } });

const MODES: { name: string; view: ReturnType<typeof viewOf>; shadow: boolean; mode: string }[] = [
  { name: 'ours, renewed 1 s ago', view: lease('us', 1000), shadow: false, mode: 'write' },
  { name: 'ours, renewed 11 s ago: past our renew deadline, not lapsed (the keys wait)', view: lease('us', 11_000), shadow: false, mode: 'overdue' },
  { name: 'ours, renewed 11 s ago, shadow deployment: the keys wait, no dry run', view: lease('us', 11_000), shadow: true, mode: 'overdue' },
  { name: 'ours, renewed 16 s ago: lapsed (a candidate may hold it any moment)', view: lease('us', 16_000), shadow: false, mode: 'fenced' },
  { name: 'ours, old leader not yet stopped', view: lease('us', 0, { [WRITABLE_AFTER]: String(NOW + 5000) }), shadow: false, mode: 'fenced' },
  { name: 'ours, being handed back, shadow deployment', view: lease('us', 0, { [HANDING_BACK]: 'true' }), shadow: true, mode: 'shadow' },
  { name: "someone else's", view: lease('kubevirt', 0), shadow: false, mode: 'fenced' },
  { name: "someone else's, shadow deployment", view: lease('kubevirt', 0), shadow: true, mode: 'shadow' },
  { name: 'no Lease at all', view: viewOf(undefined), shadow: false, mode: 'fenced' },
];

for (const c of MODES) {
  test(`fence: ${c.name} → ${c.mode}`, () => {
    // act + assert
    assert.equal(writeModeOf(c.view, 'us', c.shadow, NOW), c.mode);
  });
}
