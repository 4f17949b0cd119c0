import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { snapshotMapper } from '../../../functions/snapshot/wakes.ts';
import type { EventType, WatchedObject } from '../../../shared/relay/route.ts';

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'ns', ...extra });
const snapshot = (name: string, vm: string, kind = 'VirtualMachine'): WatchedObject => ({ metadata: meta(name), spec: { source: { apiGroup: 'kubevirt.io', kind, name: vm } } });
const content = (name: string, snap: string): WatchedObject => ({ metadata: meta(name), spec: { virtualMachineSnapshotName: snap } });
const vs = (name: string, contentName: string): WatchedObject => ({ metadata: meta(name, { ownerReferences: [{ kind: 'VirtualMachineSnapshotContent', name: contentName, controller: true }] }) });
const vm = (name: string, claims: string[] = []): WatchedObject => ({
  metadata: meta(name),
  spec: { template: { spec: { volumes: claims.map((c, i) => (i % 2 === 0 ? { name: `v${i}`, persistentVolumeClaim: { claimName: c } } : { name: `v${i}`, dataVolume: { name: c } })) } } },
});
const plain = (name: string): WatchedObject => ({ metadata: meta(name) });

describe('snapshot relay mapping', () => {
  const cases: Array<{ name: string; events: Array<[string, EventType, WatchedObject]>; want: string[] }> = [
    { name: 'a snapshot wakes itself', events: [['VirtualMachineSnapshot', 'ADDED', snapshot('s', 'vm')]], want: ['ns/s'] },
    { name: 'a content wakes its snapshot', events: [['VirtualMachineSnapshotContent', 'MODIFIED', content('vmsnapshot-content-u', 's')]], want: ['ns/s'] },
    { name: 'a VolumeSnapshot wakes the snapshot of its content', events: [['VirtualMachineSnapshotContent', 'ADDED', content('c', 's')], ['VolumeSnapshot', 'MODIFIED', vs('vs', 'c')]], want: ['ns/s', 'ns/s'] },
    { name: 'a VolumeSnapshot of an unknown content wakes nothing', events: [['VolumeSnapshot', 'MODIFIED', vs('vs', 'other')]], want: [] },
    { name: 'a VM wakes itself and its snapshots', events: [['VirtualMachineSnapshot', 'ADDED', snapshot('s1', 'vm')], ['VirtualMachineSnapshot', 'ADDED', snapshot('s2', 'vm')], ['VirtualMachine', 'MODIFIED', vm('vm')]], want: ['ns/s1', 'ns/s2', 'ns/vm', 'ns/s1', 'ns/s2'] },
    { name: 'a VMI wakes the snapshots of its VM', events: [['VirtualMachineSnapshot', 'ADDED', snapshot('s', 'vm')], ['VirtualMachineInstance', 'MODIFIED', plain('vm')]], want: ['ns/s', 'ns/s'] },
    { name: 'a snapshot of another kind is not indexed', events: [['VirtualMachineSnapshot', 'ADDED', snapshot('s', 'vm', 'Pod')], ['VirtualMachineInstance', 'MODIFIED', plain('vm')]], want: ['ns/s'] },
    { name: 'a deleted snapshot leaves the index', events: [['VirtualMachineSnapshot', 'ADDED', snapshot('s', 'vm')], ['VirtualMachineSnapshot', 'DELETED', snapshot('s', 'vm')], ['VirtualMachineInstance', 'MODIFIED', plain('vm')]], want: ['ns/s', 'ns/s'] },
    { name: 'a PVC or DataVolume wakes the VMs whose volumes name it', events: [['VirtualMachine', 'ADDED', vm('vm', ['pvc-a', 'dv-b'])], ['PersistentVolumeClaim', 'MODIFIED', plain('pvc-a')], ['DataVolume', 'MODIFIED', plain('dv-b')], ['PersistentVolumeClaim', 'MODIFIED', plain('other')]], want: ['ns/vm', 'ns/vm', 'ns/vm'] },
    { name: 'a VolumeSnapshotClass wakes every VM and its snapshots', events: [['VirtualMachine', 'ADDED', vm('a')], ['VirtualMachine', 'ADDED', vm('b')], ['VirtualMachineSnapshot', 'ADDED', snapshot('s', 'a')], ['VolumeSnapshotClass', 'ADDED', { metadata: { name: 'vsc' } }]], want: ['ns/a', 'ns/b', 'ns/s', 'ns/a', 'ns/s', 'ns/b'] },
    { name: 'a deleted VM leaves the indexes', events: [['VirtualMachine', 'ADDED', vm('a', ['pvc'])], ['VirtualMachine', 'DELETED', vm('a', ['pvc'])], ['PersistentVolumeClaim', 'MODIFIED', plain('pvc')], ['VolumeSnapshotClass', 'MODIFIED', { metadata: { name: 'vsc' } }]], want: ['ns/a', 'ns/a'] },
    { name: 'pods are not its business', events: [['Pod', 'ADDED', plain('p')]], want: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const map = snapshotMapper();
      // act
      const got = c.events.flatMap(([kind, type, obj]) => map(kind, type, obj));
      // assert
      assert.ok(got.every((t) => t.controller === 'snapshot'));
      assert.deepEqual(got.map((t) => t.key), c.want);
    });
  }
});
