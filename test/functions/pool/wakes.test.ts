import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { poolMapper } from '../../../functions/pool/wakes.ts';
import type { EventType, WatchedObject } from '../../../shared/relay/route.ts';
import { REVISION_LABEL } from '../../../functions/pool/well-known.ts';

const ref = (kind: string, name: string, uid = `uid-${name}`) => [{ apiVersion: 'x', kind, name, uid, controller: true }];
const vm = (name: string, pool?: string, templateRevision?: string): WatchedObject => ({
  metadata: { name, namespace: 'ns', ...(pool ? { ownerReferences: ref('VirtualMachinePool', pool) } : {}) },
  spec: { template: { metadata: { labels: templateRevision ? { [REVISION_LABEL]: templateRevision } : {} } } },
});
const owned = (name: string, kind: string, owner: string, labels: Record<string, string> = {}, deleting = false): WatchedObject => ({
  metadata: { name, namespace: 'ns', labels, ownerReferences: ref(kind, owner), ...(deleting ? { deletionTimestamp: 'x' } : {}) },
});

describe('pool relay mapping', () => {
  const cases: Array<{ name: string; events: Array<[string, EventType, WatchedObject, WatchedObject?]>; want: string[] }> = [
    { name: 'a pool event wakes the pool', events: [['VirtualMachinePool', 'MODIFIED', { metadata: { name: 'p', namespace: 'ns' } }]], want: ['ns/p'] },
    { name: 'a VM wakes its pool', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p')]], want: ['ns/p'] },
    { name: 'an orphan VM wakes nothing (no adoption)', events: [['VirtualMachine', 'ADDED', vm('p-0')]], want: [] },
    { name: 'a VM released from a pool wakes the old pool', events: [['VirtualMachine', 'MODIFIED', vm('p-0'), vm('p-0', 'p')]], want: ['ns/p'] },
    { name: 'a deleted VM wakes its pool', events: [['VirtualMachine', 'DELETED', vm('p-0', 'p')]], want: ['ns/p'] },
    { name: 'a VMI behind its VM revision wakes the pool', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p', 'p-2')], ['VirtualMachineInstance', 'MODIFIED', owned('p-0', 'VirtualMachine', 'p-0', { [REVISION_LABEL]: 'p-1' })]], want: ['ns/p', 'ns/p'] },
    { name: 'a VMI at its VM revision does not', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p', 'p-2')], ['VirtualMachineInstance', 'MODIFIED', owned('p-0', 'VirtualMachine', 'p-0', { [REVISION_LABEL]: 'p-2' })]], want: ['ns/p'] },
    { name: 'nor a deleting VMI', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p', 'p-2')], ['VirtualMachineInstance', 'MODIFIED', owned('p-0', 'VirtualMachine', 'p-0', {}, true)]], want: ['ns/p'] },
    { name: 'a VMI of a VM outside pools wakes nothing', events: [['VirtualMachineInstance', 'ADDED', owned('solo', 'VirtualMachine', 'solo')]], want: [] },
    { name: 'a ControllerRevision wakes its pool', events: [['ControllerRevision', 'ADDED', owned('p-1', 'VirtualMachinePool', 'p')]], want: ['ns/p'] },
    { name: 'its deletion does not', events: [['ControllerRevision', 'DELETED', owned('p-1', 'VirtualMachinePool', 'p')]], want: [] },
    { name: 'a DataVolume of a pool VM wakes the pool', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p')], ['DataVolume', 'MODIFIED', owned('disk-0', 'VirtualMachine', 'p-0')]], want: ['ns/p', 'ns/p'] },
    { name: 'so does its PVC', events: [['VirtualMachine', 'ADDED', vm('p-0', 'p')], ['PersistentVolumeClaim', 'MODIFIED', owned('disk-0', 'VirtualMachine', 'p-0')]], want: ['ns/p', 'ns/p'] },
    { name: 'a PVC of a VM outside pools wakes nothing', events: [['PersistentVolumeClaim', 'ADDED', owned('disk', 'VirtualMachine', 'solo')]], want: [] },
    { name: 'pods are not the pool controller’s business', events: [['Pod', 'ADDED', { metadata: { name: 'x', namespace: 'ns' } }]], want: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const map = poolMapper();
      // act
      const got = c.events.flatMap(([kind, type, obj, old]) => map(kind, type, obj, old));
      // assert
      assert.ok(got.every((k) => k.controller === 'pool'));
      assert.deepEqual(got.map((k) => k.key), c.want);
    });
  }
});
