/**
 * VMI conditions as KubeVirt serialises them (the live differential lane found ours writing
 * `reason: ""` and `message: ""` on the Ready condition after a migration): an empty reason or
 * message is no field, and setting one over the other is no change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { condition, setCondition } from '../../../functions/vmi/conditions.ts';
import type { VirtualMachineInstanceStatus } from '../../../shared/api/index.ts';

const NOW = '2026-12-06T10:00:00Z';

describe('VMI condition shape', () => {
  test('empty reason and message are omitted; set ones kept', () => {
    // act
    const bare = condition('Ready', 'True', '', '', NOW);
    const full = condition('Ready', 'False', 'PodNotExists', 'virt-launcher pod has not yet been scheduled', NOW);
    // assert
    assert.deepEqual(bare, { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: NOW });
    assert.deepEqual([full.reason, full.message], ['PodNotExists', 'virt-launcher pod has not yet been scheduled']);
  });

  test('a condition stored with reason "" is the same as one without: not rewritten', () => {
    // arrange
    const status: VirtualMachineInstanceStatus = { conditions: [{ type: 'Ready', status: 'True', reason: '', message: '', lastProbeTime: null, lastTransitionTime: '2026-12-06T09:00:00Z' }] };
    // act
    setCondition(status, condition('Ready', 'True', '', '', NOW));
    // assert
    assert.equal(status.conditions?.[0]?.lastTransitionTime, '2026-12-06T09:00:00Z', 'kept as it was');
  });
});
