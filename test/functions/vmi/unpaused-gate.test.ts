/**
 * The launcher pod's readiness-gate condition `kubevirt.io/virtual-machine-unpaused`
 * (reference.md §a.4): when the VMI controller patches it, and to what.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { unpausedConditionPatch } from '../../../functions/vmi/unpaused-gate.ts';

const NOW = '2026-11-29T10:00:00.000Z';
const GATE = 'kubevirt.io/virtual-machine-unpaused';

function vmi(paused?: 'True' | 'False'): VirtualMachineInstance {
  return {
    metadata: { name: 'a', namespace: 'ns', uid: 'vmi-uid' },
    spec: { domain: { devices: {} } },
    status: { phase: 'Running', conditions: paused ? [{ type: 'Paused', status: paused, reason: 'PausedByUser' }] : [] },
  };
}

interface PodOpts {
  readonly gate?: boolean;
  readonly condition?: Pick<V1PodCondition, 'status' | 'reason'>;
  readonly deleting?: boolean;
  readonly phase?: string;
  readonly temp?: boolean;
}

function pod(opts: PodOpts = {}): V1Pod {
  const conditions: V1PodCondition[] = [{ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' }];
  if (opts.condition) conditions.push({ type: GATE, ...opts.condition });
  return {
    metadata: {
      name: 'virt-launcher-a-xyz',
      namespace: 'ns',
      ...(opts.deleting ? { deletionTimestamp: new Date(NOW) } : {}),
      ...(opts.temp ? { annotations: { 'kubevirt.io/ephemeral-provisioning': 'true' } } : {}),
    },
    spec: { containers: [{ name: 'compute', image: 'launcher' }], ...(opts.gate === false ? {} : { readinessGates: [{ conditionType: GATE }] }) },
    status: { phase: opts.phase ?? 'Running', conditions },
  };
}

/** The one condition a patch sets, as `status/reason`; `none` when no patch. */
function outcome(v: VirtualMachineInstance, p: V1Pod | undefined): string {
  const patch = unpausedConditionPatch(v, p, NOW);
  if (!patch) return 'none';
  assert.equal(patch.type, 'strategic', 'conditions merge by type: only a strategic patch keeps the kubelet\'s');
  const conds = (patch.body as { status: { conditions: Array<{ type: string; status: string; reason: string; message: string; lastProbeTime: string; lastTransitionTime: string }> } }).status.conditions;
  assert.equal(conds.length, 1, 'only the gate condition is sent');
  assert.equal(conds[0]?.type, GATE);
  assert.deepEqual([conds[0]?.lastProbeTime, conds[0]?.lastTransitionTime], [NOW, NOW], 'KubeVirt stamps both times');
  assert.equal(conds[0]?.message, conds[0]?.status === 'True' ? 'the virtual machine is not paused' : 'the virtual machine is paused', "KubeVirt's message");
  return `${conds[0]?.status}/${conds[0]?.reason}`;
}

describe('unpausedConditionPatch', () => {
  const cases: ReadonlyArray<{ name: string; vmi: VirtualMachineInstance; pod: V1Pod | undefined; want: string }> = [
    { name: 'new launcher pod, VMI not paused → True/NotPaused', vmi: vmi(), pod: pod(), want: 'True/NotPaused' },
    { name: 'new launcher pod (still Pending), VMI not paused → True/NotPaused', vmi: vmi(), pod: pod({ phase: 'Pending' }), want: 'True/NotPaused' },
    { name: 'VMI Paused=True, pod without the condition → nothing (KubeVirt pauses a pod only from True)', vmi: vmi('True'), pod: pod(), want: 'none' },
    { name: 'VMI Paused=False → True/NotPaused', vmi: vmi('False'), pod: pod(), want: 'True/NotPaused' },
    { name: 'already True/NotPaused → no write (one write per pod, not per reconcile)', vmi: vmi(), pod: pod({ condition: { status: 'True', reason: 'NotPaused' } }), want: 'none' },
    { name: 'already False/Paused while paused → no write', vmi: vmi('True'), pod: pod({ condition: { status: 'False', reason: 'Paused' } }), want: 'none' },
    { name: 'True/NotPaused but the VMI was paused → False/Paused', vmi: vmi('True'), pod: pod({ condition: { status: 'True', reason: 'NotPaused' } }), want: 'False/Paused' },
    { name: 'False/Paused and the VMI was unpaused → True/NotPaused', vmi: vmi(), pod: pod({ condition: { status: 'False', reason: 'Paused' } }), want: 'True/NotPaused' },
    { name: 'same status, other reason → no write (KubeVirt compares the status only)', vmi: vmi(), pod: pod({ condition: { status: 'True', reason: 'SomethingElse' } }), want: 'none' },
    { name: 'False with another reason, VMI not paused → True/NotPaused', vmi: vmi(), pod: pod({ condition: { status: 'False', reason: 'SomethingElse' } }), want: 'True/NotPaused' },
    { name: 'no pod → nothing', vmi: vmi(), pod: undefined, want: 'none' },
    { name: 'pod being deleted → nothing', vmi: vmi(), pod: pod({ deleting: true }), want: 'none' },
    { name: 'pod finished → nothing', vmi: vmi(), pod: pod({ phase: 'Failed' }), want: 'none' },
    { name: 'pod without the readiness gate → nothing', vmi: vmi(), pod: pod({ gate: false }), want: 'none' },
    { name: 'WaitForFirstConsumer temp pod → nothing', vmi: vmi(), pod: pod({ temp: true }), want: 'none' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = outcome(c.vmi, c.pod);
      // assert
      assert.equal(got, c.want);
    });
  }

  test('never mutates the pod or the VMI', () => {
    // arrange
    const v = vmi('True');
    const p = pod();
    const before = JSON.stringify([v, p]);
    // act
    unpausedConditionPatch(v, p, NOW);
    // assert
    assert.equal(JSON.stringify([v, p]), before);
  });
});
