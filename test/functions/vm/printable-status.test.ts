import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataVolume, DataVolumeCondition, VirtualMachine, VirtualMachineInstance, VirtualMachinePrintableStatus } from '../../../shared/api/index.ts';
import { printableStatus, type PrintableInput } from '../../../functions/vm/printable-status.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const EARLIER = '2026-01-01T11:00:00Z';
const LATER = '2026-01-01T13:00:00Z';

function vm(runStrategy = 'Always', deleting = false): VirtualMachine {
  return { metadata: { name: 'vm', ...(deleting ? { deletionTimestamp: EARLIER } : {}) }, spec: { runStrategy, template: {} } };
}

function vmi(phase: string, extra: { deleting?: boolean; conditions?: { type: string; status: string; reason?: string }[]; migration?: { startTimestamp?: string; endTimestamp?: string } } = {}): VirtualMachineInstance {
  return {
    metadata: { name: 'vm', uid: 'u', ...(extra.deleting ? { deletionTimestamp: EARLIER } : {}) },
    spec: { domain: { devices: {} } },
    status: { phase, ...(extra.conditions ? { conditions: extra.conditions } : {}), ...(extra.migration ? { migrationState: extra.migration } : {}) },
  };
}

function dv(phase: string, conditions: DataVolumeCondition[] = []): DataVolume {
  return { metadata: { name: 'disk' }, spec: {}, status: { phase, conditions } };
}

function input(over: Partial<PrintableInput>): PrintableInput {
  return { vm: vm(), strategy: 'Always', vmi: undefined, dataVolumes: [], creationExpected: false, deletionExpected: false, consecutiveFailCount: 0, now: NOW, ...over };
}

const unschedulable = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable' };
const sync = (reason: string) => ({ type: 'Synchronized', status: 'False', reason });

describe('printableStatus (first match wins, reference §c.4)', () => {
  const cases: [string, Partial<PrintableInput>, VirtualMachinePrintableStatus][] = [
    ['VM deleted, VMI running → Terminating', { vm: vm('Always', true), vmi: vmi('Running') }, 'Terminating'],
    ['VMI deleting, not final → Stopping', { vmi: vmi('Running', { deleting: true }) }, 'Stopping'],
    ['deletion expected → Stopping', { vmi: vmi('Running'), deletionExpected: true }, 'Stopping'],
    ['final VMI being deleted is not Stopping', { vmi: vmi('Succeeded', { deleting: true }), strategy: 'Manual', vm: vm('Manual') }, 'Stopped'],
    ['migration started, not ended → Migrating', { vmi: vmi('Running', { migration: { startTimestamp: EARLIER } }) }, 'Migrating'],
    ['migration ended → Running', { vmi: vmi('Running', { migration: { startTimestamp: EARLIER, endTimestamp: EARLIER } }) }, 'Running'],
    ['migration ends in the future → still Migrating', { vmi: vmi('Running', { migration: { startTimestamp: EARLIER, endTimestamp: LATER } }) }, 'Migrating'],
    ['Paused=True → Paused', { vmi: vmi('Running', { conditions: [{ type: 'Paused', status: 'True' }] }) }, 'Paused'],
    ['Running', { vmi: vmi('Running') }, 'Running'],
    ['Synchronized FailedPvcNotFound → ErrorPvcNotFound', { vmi: vmi('Pending', { conditions: [sync('FailedPvcNotFound')] }) }, 'ErrorPvcNotFound'],
    ['DV Failed → DataVolumeError', { dataVolumes: [dv('Failed')] }, 'DataVolumeError'],
    ['DV Running=False ImagePullFailed → DataVolumeError', { dataVolumes: [dv('ImportInProgress', [{ type: 'Running', status: 'False', reason: 'ImagePullFailed' }])] }, 'DataVolumeError'],
    ['PodScheduled=False Unschedulable → ErrorUnschedulable', { vmi: vmi('Scheduling', { conditions: [unschedulable] }) }, 'ErrorUnschedulable'],
    ['DV importing → Provisioning', { dataVolumes: [dv('ImportInProgress')] }, 'Provisioning'],
    ['DV with no status yet → Provisioning', { dataVolumes: [{ metadata: { name: 'disk' }, spec: {} }] }, 'Provisioning'],
    ['WFFC DV whose claim is bound already → Provisioning (KubeVirt\'s HasDataVolumeProvisioning)', { dataVolumes: [dv('WaitForFirstConsumer', [{ type: 'Bound', status: 'True' }])] }, 'Provisioning'],
    ['WFFC DV unbound, VM set to start → WaitingForVolumeBinding', { dataVolumes: [dv('WaitForFirstConsumer', [{ type: 'Bound', status: 'False' }])] }, 'WaitingForVolumeBinding'],
    ['WFFC DV unbound, VM Halted → Stopped', { vm: vm('Halted'), strategy: 'Halted', dataVolumes: [dv('WaitForFirstConsumer', [{ type: 'Bound', status: 'False' }])] }, 'Stopped'],
    ['Synchronized ErrImagePull → ErrImagePull', { vmi: vmi('Scheduling', { conditions: [sync('ErrImagePull')] }) }, 'ErrImagePull'],
    ['Synchronized ImagePullBackOff → ImagePullBackOff', { vmi: vmi('Scheduling', { conditions: [sync('ImagePullBackOff')] }) }, 'ImagePullBackOff'],
    ['no VMI, creation expected → Starting', { creationExpected: true }, 'Starting'],
    ['VMI with no phase yet → Starting', { vmi: vmi('') }, 'Starting'],
    ['VMI Scheduled → Starting', { vmi: vmi('Scheduled') }, 'Starting'],
    ['no VMI, start failures, Always → CrashLoopBackOff', { consecutiveFailCount: 2 }, 'CrashLoopBackOff'],
    ['final VMI, start failures, RerunOnFailure → CrashLoopBackOff', { vm: vm('RerunOnFailure'), strategy: 'RerunOnFailure', vmi: vmi('Failed'), consecutiveFailCount: 1 }, 'CrashLoopBackOff'],
    ['start failures but Manual → Stopped', { vm: vm('Manual'), strategy: 'Manual', consecutiveFailCount: 1 }, 'Stopped'],
    ['no VMI → Stopped', {}, 'Stopped'],
    ['VMI Succeeded → Stopped', { vmi: vmi('Succeeded') }, 'Stopped'],
    ['VMI phase Unknown → Unknown', { vmi: vmi('Unknown') }, 'Unknown'],
  ];
  for (const [name, over, want] of cases) {
    test(name, () => {
      // act
      const got = printableStatus(input(over));
      // assert
      assert.equal(got, want);
    });
  }
});
