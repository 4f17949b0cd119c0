/**
 * The VM status as KubeVirt's VM controller writes it, where the live differential lane found
 * ours different: `created`/`ready` are omitted when false (Go `omitempty`), and a stopped VM
 * keeps the conditions it mirrored from its last VMI.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { computeVmStatus } from '../../../functions/vm/update-status.ts';

const T0 = '2026-12-06T09:00:00.000Z';

function vm(status: VirtualMachine['status'] = {}): VirtualMachine {
  return { metadata: { name: 'v', namespace: 'ns', generation: 2 }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } }, status } as VirtualMachine;
}

function runningVmi(): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'ns', uid: 'u1' },
    spec: { domain: { devices: {} } },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }, { type: 'LiveMigratable', status: 'True', lastTransitionTime: T0 }] },
  } as VirtualMachineInstance;
}

const status = (v: VirtualMachine, vmi: VirtualMachineInstance | undefined) =>
  computeVmStatus({ observed: { vm: v, vmi, foreignVmi: undefined, dataVolumes: new Map() }, syncError: undefined, creationExpected: false, deletionExpected: false, now: Date.parse(T0), random: 0 });

describe('computeVmStatus: what KubeVirt omits and keeps', () => {
  const cases: ReadonlyArray<{ name: string; vmi: VirtualMachineInstance | undefined; prior: VirtualMachine['status']; want: { created?: boolean; ready?: boolean } }> = [
    { name: 'a running, ready VMI → created and ready true', vmi: runningVmi(), prior: {}, want: { created: true, ready: true } },
    { name: 'no VMI → neither field (not false)', vmi: undefined, prior: { created: true, ready: true }, want: {} },
    { name: 'a VMI not ready → created only', vmi: { ...runningVmi(), status: { phase: 'Scheduling' } } as VirtualMachineInstance, prior: {}, want: { created: true } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const s = status(vm(c.prior), c.vmi);
      // assert
      assert.deepEqual({ created: s.created, ready: s.ready }, { created: c.want.created, ready: c.want.ready });
      assert.equal('created' in s, c.want.created !== undefined, 'absent, not undefined-valued, for the JSON patch');
    });
  }

  test("a stopped VM keeps the conditions mirrored from its last VMI; Ready turns False", () => {
    // arrange
    const running = status(vm(), runningVmi());
    // act
    const stopped = status(vm(running), undefined);
    // assert
    const types = (stopped.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
    assert.deepEqual(types, ['LiveMigratable=True', 'Ready=False']);
    const ready = stopped.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([ready?.reason, ready?.lastProbeTime, ready?.lastTransitionTime], ['VMINotExists', T0, T0], 'KubeVirt stamps both times on the Ready condition it makes');
  });
});
