/**
 * A receiver VMI (the target of a decentralized migration, `kubevirt.io/create-migration-target:
 * "true"`) through the VMI controller's sync and status (KubeVirt `lifecycle.go`): no launcher pod
 * and `WaitingForSync` until the migration labels it `kubevirt.io/migrationTargetNodeName`; its
 * pod lost or its migration failed → back to `WaitingForSync` (not `Failed`), the migration
 * recorded failed and over; deleted while waiting → its finalizers go.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { decideSync, type Observed } from '../../../functions/vmi/sync.ts';
import { computeVmi } from '../../../functions/vmi/update-status.ts';

const NOW = '2026-12-06T10:00:00.000Z';
const VMI_FIN = 'kubevirt.io/foregroundDeleteVirtualMachine';
const VM_FIN = 'kubevirt.io/virtualMachineControllerFinalize';

function vmi(phase: string, o: { receiver?: boolean; labelled?: boolean; failed?: boolean; deleting?: boolean } = {}): VirtualMachineInstance {
  return {
    metadata: {
      name: 'r', namespace: 'ns', uid: 'vmi-uid', finalizers: [VMI_FIN, VM_FIN],
      annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', 'kubevirt.io/storage-observed-api-version': 'v1', ...(o.receiver !== false && { 'kubevirt.io/create-migration-target': 'true' }) },
      ...(o.labelled && { labels: { 'kubevirt.io/migrationTargetNodeName': 'node02' } }),
      ...(o.deleting && { deletionTimestamp: NOW as never }),
    },
    spec: { domain: { devices: {} } },
    status: { phase: phase as never, ...(o.failed !== undefined && { migrationState: { migrationUid: 'm', failed: o.failed } }) },
  } as VirtualMachineInstance;
}
function pod(phase: string, ready = phase === 'Running'): V1Pod {
  return {
    metadata: { name: 'virt-launcher-r', namespace: 'ns', uid: 'pod-uid', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'r', uid: 'vmi-uid', controller: true }] },
    spec: { nodeName: 'node02', containers: [{ name: 'compute', image: 'img' }] },
    status: { phase, containerStatuses: [{ name: 'compute', ready, restartCount: 0, image: 'img', imageID: '', state: phase === 'Running' ? { running: {} } : phase === 'Failed' ? { terminated: { exitCode: 1 } } : { waiting: {} } }] },
  };
}
const observed = (v: VirtualMachineInstance, p?: V1Pod): Observed => ({ vmi: v, pods: p ? [p] : [], pod: p, volumes: { ready: true, wffc: false }, migrations: [] });
const status = (v: VirtualMachineInstance, p?: V1Pod, ownerVmLive = true) => computeVmi({ observed: observed(v, p), syncError: undefined, now: NOW, launcherImage: 'img', ownerVmLive });

describe('a receiver VMI', () => {
  const rows: { name: string; vmi: VirtualMachineInstance; pod?: V1Pod; phase: string; sync?: string }[] = [
    { name: 'new, not yet synchronized → WaitingForSync, no pod', vmi: vmi(''), phase: 'WaitingForSync', sync: 'none' },
    { name: 'new, labelled by its migration → Pending, its pod created', vmi: vmi('', { labelled: true }), phase: 'Pending', sync: 'create-pod' },
    { name: 'an ordinary VMI → Pending, its pod created', vmi: vmi('', { receiver: false }), phase: 'Pending', sync: 'create-pod' },
    { name: 'WaitingForSync with a live pod → Scheduling', vmi: vmi('WaitingForSync', { labelled: true }), pod: pod('Pending'), phase: 'Scheduling' },
    { name: 'WaitingForSync, its migration failed → stays', vmi: vmi('WaitingForSync', { labelled: true, failed: true }), pod: pod('Pending'), phase: 'WaitingForSync' },
    { name: 'WaitingForSync, its pod down → stays', vmi: vmi('WaitingForSync', { labelled: true }), pod: pod('Failed'), phase: 'WaitingForSync' },
    { name: 'Scheduling, its pod gone → WaitingForSync (an ordinary VMI: Failed)', vmi: vmi('Scheduling', { labelled: true }), phase: 'WaitingForSync' },
    { name: 'Scheduling, ordinary, pod gone → Failed', vmi: vmi('Scheduling', { receiver: false }), phase: 'Failed' },
    { name: 'Scheduling, its pod failed → WaitingForSync', vmi: vmi('Scheduling', { labelled: true }), pod: pod('Failed'), phase: 'WaitingForSync' },
  ];
  for (const r of rows) {
    test(r.name, () => {
      // act
      const out = status(r.vmi, r.pod);
      const sync = decideSync(observed(r.vmi, r.pod));
      // assert
      assert.equal(out.status?.phase, r.phase);
      if (r.sync) assert.equal(sync.kind, r.sync);
    });
  }

  test('Scheduled, its pod down → WaitingForSync, the migration recorded failed, completed, ended', () => {
    // arrange
    const v = vmi('Scheduled', { labelled: true, failed: false });
    // act
    const out = status(v, pod('Failed'));
    // assert
    assert.equal(out.status?.phase, 'WaitingForSync');
    assert.deepEqual(out.status?.migrationState, { migrationUid: 'm', failed: true, completed: true, endTimestamp: NOW });
  });

  test('deleted while WaitingForSync: the VMI finalizer goes, the VM controller\'s too once no VM owns it', () => {
    // act
    const owned = status(vmi('WaitingForSync', { deleting: true }), undefined, true);
    const orphan = status(vmi('WaitingForSync', { deleting: true }), undefined, false);
    // assert
    assert.deepEqual(owned.metadata?.finalizers, [VM_FIN]);
    assert.deepEqual(orphan.metadata?.finalizers, []);
  });
});
