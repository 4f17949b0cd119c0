/**
 * The VMI controller's part of an eviction (KubeVirt `lifecycle.go` `updateStatus` and `sync`,
 * `descheduler.go` `MarkEvictionInProgress` / `MarkEvictionCompleted`): the `EvictionRequested`
 * condition mirrors `status.evacuationNodeName` in every phase, and the ready launcher pod carries
 * `descheduler.alpha.kubernetes.io/eviction-in-progress: "true"` while the mark is there.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { evictionInProgressOps } from '../../../shared/network/pod-annotations.ts';
import { computeVmi } from '../../../functions/vmi/update-status.ts';
import { planVmiWrite } from '../../../functions/vmi/write-status.ts';

const NOW = '2026-12-06T10:00:00.000Z';
const KEY = 'descheduler.alpha.kubernetes.io/eviction-in-progress';
const PATH = '/metadata/annotations/descheduler.alpha.kubernetes.io~1eviction-in-progress';

function vmi(phase: string, status: Record<string, unknown> = {}): VirtualMachineInstance {
  return { metadata: { name: 'a', namespace: 'ns', uid: 'u', annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', 'kubevirt.io/storage-observed-api-version': 'v1' } }, spec: { domain: { devices: {} } }, status: { phase, ...status } } as VirtualMachineInstance;
}
const cond = (v: VirtualMachineInstance) => v.status?.conditions?.find((c) => c.type === 'EvictionRequested');
const compute = (v: VirtualMachineInstance) => computeVmi({ observed: { vmi: v, pods: [], pod: undefined, volumes: { ready: true, wffc: false }, migrations: [] }, syncError: undefined, now: NOW, launcherImage: 'img', ownerVmLive: true });

describe('EvictionRequested', () => {
  for (const phase of ['Pending', 'Running', 'Failed']) {
    test(`${phase}: marked → True "VMI is marked for eviction"; unmarked → removed`, () => {
      // arrange
      const marked = vmi(phase, { evacuationNodeName: 'node01' });
      // act
      const on = compute(marked);
      const off = compute({ ...on, status: { ...on.status, evacuationNodeName: undefined } } as VirtualMachineInstance);
      // assert
      assert.deepEqual(cond(on), { type: 'EvictionRequested', status: 'True', reason: 'EvictionRequested', message: 'VMI is marked for eviction', lastProbeTime: null, lastTransitionTime: NOW });
      assert.equal(cond(off), undefined);
    });
  }

  test('a Running VMI gets it by the handler-owned patch (conditions are a patched field), and not again', () => {
    // arrange
    const running = vmi('Running', { evacuationNodeName: 'node01' });
    // act
    const desired = compute(running);
    const write = planVmiWrite(running, desired);
    const again = computeVmi({ observed: { vmi: desired, pods: [], pod: undefined, volumes: { ready: true, wffc: false }, migrations: [] }, syncError: undefined, now: '2026-12-06T11:00:00.000Z', launcherImage: 'img', ownerVmLive: true });
    // assert
    assert.equal(write.kind, 'patch');
    assert.ok(write.kind === 'patch' && write.ops.some((o) => o.path === '/status/conditions'));
    assert.deepEqual(cond(again), cond(desired), 'an existing True condition is not rewritten (its transition time kept)');
  });
});

describe('eviction-in-progress on the launcher pod', () => {
  const pod = (annotations?: Record<string, string>): V1Pod => ({ metadata: { name: 'p', ...(annotations && { annotations }) } });
  const rows: { name: string; marked: boolean; annotations?: Record<string, string>; ops: unknown[] }[] = [
    { name: 'marked, not annotated → add "true"', marked: true, annotations: { x: '' }, ops: [{ op: 'add', path: PATH, value: 'true' }] },
    { name: 'marked, pod without annotations → the map with it', marked: true, ops: [{ op: 'add', path: '/metadata/annotations', value: { [KEY]: 'true' } }] },
    { name: 'marked, already annotated (any value) → nothing', marked: true, annotations: { [KEY]: 'yes' }, ops: [] },
    { name: 'unmarked, annotated → test its value, remove', marked: false, annotations: { [KEY]: 'true' }, ops: [{ op: 'test', path: PATH, value: 'true' }, { op: 'remove', path: PATH }] },
    { name: 'unmarked, not annotated → nothing', marked: false, annotations: {}, ops: [] },
  ];
  for (const r of rows) {
    test(r.name, () => {
      // arrange
      const v = vmi('Running', r.marked ? { evacuationNodeName: 'node01' } : {});
      const p = pod(r.annotations);
      // act
      const ops = evictionInProgressOps(v, p, p.metadata?.annotations !== undefined);
      // assert
      assert.deepEqual(ops, r.ops);
    });
  }
});
