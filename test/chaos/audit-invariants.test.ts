/**
 * The chaos scenarios' audit-log checks (audit-invariants.ts) catch what they are for, on
 * hand-made entries: a second launcher pod, an object created twice, a pool rollout with two VMs
 * down at once — and stay quiet on a clean history.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditEntry } from '../../sandbox/apiserver/audit.ts';
import { createdMoreThanOnce, launcherOf, OverLimit, overLimit, worstUnavailable } from './audit-invariants.ts';

let rv = 100;
function entry(resource: string, verb: string, name: string, object: Record<string, unknown>, type: AuditEntry['type'] = verb === 'create' ? 'ADDED' : verb === 'delete' ? 'DELETED' : 'MODIFIED'): AuditEntry {
  return { time: rv, identity: 'test', verb, type, group: '', resource, name, namespace: 'default', resourceVersion: String(rv++), object: { metadata: { name }, ...object } as AuditEntry['object'] };
}
const launcher = (name: string, vmiUid: string, extra: Record<string, unknown> = {}) => entry('pods', 'create', name, { metadata: { name, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': vmiUid } }, ...extra });
const vmi = (name: string, phase: string, ready: boolean) => entry('virtualmachineinstances', 'update', name, { status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });
const vmiDelete = (name: string) => entry('virtualmachineinstances', 'delete', name, { metadata: { name, deletionTimestamp: '2026-12-06T00:00:00Z' }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, 'MODIFIED');
const vmStatus = (name: string, ready: boolean) => ({ ...entry('virtualmachines', 'update', name, { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } }), subresource: 'status' });

test('overLimit: a second live launcher pod for one VMI is reported; one replacing a deleted one, or a migration target beside its source, is not', () => {
  // arrange
  const clean = [launcher('virt-launcher-a-1', 'uid-a'), entry('pods', 'delete', 'virt-launcher-a-1', {}), launcher('virt-launcher-a-2', 'uid-a'), launcher('virt-launcher-b-1', 'uid-b')];
  const twice = [launcher('virt-launcher-c-1', 'uid-c'), launcher('virt-launcher-c-2', 'uid-c')];
  // A migration's target pod runs beside its source: one of each is fine.
  const migrating = [launcher('virt-launcher-d-1', 'uid-d'), entry('pods', 'create', 'virt-launcher-d-2', { metadata: { name: 'virt-launcher-d-2', labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'uid-d', 'kubevirt.io/migrationJobUID': 'm-1' } } })];
  // act
  const ok = overLimit([...clean, ...migrating], 'pods', launcherOf);
  const bad = overLimit(twice, 'pods', launcherOf);
  // assert
  assert.deepEqual(ok, []);
  assert.equal(bad.length, 1);
  assert.match(bad[0] ?? '', /virt-launcher-c-1 \+ virt-launcher-c-2 live at once for uid-c/);
});

test('createdMoreThanOnce: a name created, deleted and created again is reported', () => {
  // arrange
  const entries = [entry('virtualmachines', 'create', 'dst', {}), entry('virtualmachines', 'delete', 'dst', {}), entry('virtualmachines', 'create', 'dst', {}), entry('virtualmachines', 'create', 'other', {})];
  // act + assert
  assert.deepEqual(createdMoreThanOnce(entries, 'virtualmachines'), ['dst ×2']);
});

test('worstUnavailable: two pool VMs down at one instant after the change; instants before it set the state only', () => {
  // arrange: both Running and Ready, then (from the change on) one down, back, the other down with the first
  const before = [vmi('p-0', 'Running', true), vmi('p-1', 'Running', true)];
  const after = [vmi('p-0', 'Scheduled', false), vmi('p-0', 'Running', true), vmi('p-1', 'Scheduled', false), vmi('p-0', 'Scheduled', false)];
  // act
  const r = worstUnavailable([...before, ...after], ['p-0', 'p-1'], before.length);
  // assert
  assert.equal(r.instants, 4);
  assert.equal(r.worst, 2);
  assert.match(r.at, /of p-1 .*: p-0 Running Ready=True; p-1 Scheduled Ready=False|of p-0 .*: p-0 Scheduled Ready=False; p-1 Scheduled Ready=False/);
});

test('worstUnavailable: a VMI restarted while its VM was not Ready is outside the budget (KubeVirt restarts unhealthy VMs first), and named', () => {
  // arrange: three pool VMs, all VMIs Ready; p-1's VM reports Ready or not when the rollout starts,
  // and the pool restarts p-1 and p-0 in one pass (the unhealthy step, then a budget of 1)
  const names = ['p-0', 'p-1', 'p-2'];
  const rollout = (p1VmReady: boolean) => {
    const before = [vmi('p-0', 'Running', true), vmi('p-1', 'Running', true), vmi('p-2', 'Running', true), vmStatus('p-0', true), vmStatus('p-1', p1VmReady), vmStatus('p-2', true)];
    const after = [vmiDelete('p-1'), vmiDelete('p-0'), entry('virtualmachineinstances', 'delete', 'p-1', {}), vmi('p-1', 'Scheduled', false)];
    return worstUnavailable([...before, ...after], names, before.length);
  };
  // act
  const unhealthy = rollout(false);
  const ready = rollout(true);
  // assert: with p-1's VM not Ready only p-0 counts against the budget, p-1 is named
  assert.equal(unhealthy.worst, 1);
  assert.deepEqual(unhealthy.unbudgeted, ['p-1']);
  // with every VM Ready the same deletes are two against the budget
  assert.equal(ready.worst, 2);
  assert.deepEqual(ready.unbudgeted, []);
  assert.match(ready.at, /p-0 deleting Running Ready=True \(VM Ready=True\); p-1 deleting Running Ready=True \(VM Ready=True\)/);
});

test('OverLimit fed a minute at a time (the soak drops the log it replayed) finds what one replay of the whole log finds', () => {
  // arrange: a second launcher pod for uid-e created in the batch after the first
  const first = [launcher('virt-launcher-e-1', 'uid-e'), launcher('virt-launcher-f-1', 'uid-f')];
  const second = [entry('pods', 'delete', 'virt-launcher-f-1', {}), launcher('virt-launcher-e-2', 'uid-e')];
  const check = new OverLimit('pods', launcherOf);
  // act
  const found = [...check.feed(first), ...check.feed(second)];
  // assert
  assert.deepEqual(found, overLimit([...first, ...second], 'pods', launcherOf));
  assert.equal(found.length, 1);
  assert.match(found[0] ?? '', /virt-launcher-e-1 \+ virt-launcher-e-2 live at once for uid-e/);
});
