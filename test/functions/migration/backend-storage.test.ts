/**
 * Backend storage on migration (reference-vm-vmi-depth §2 "Migration"), table-driven: the target
 * pod's backend claim (shared when the source is ReadWriteMany, the migration's own otherwise),
 * the hand-off once the target domain is ready, the source's deletion after it, the target's
 * deletion when the migration fails first, and the hand-off patch.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { backendHandoffPatch, decideBackendFollowUp, migrationTargetPvcs, ownTargetPvcs, planTargetBackend } from '../../../functions/migration/backend-storage.ts';
import { applyJsonPatch } from '../../../shared/kube/json-patch-apply.ts';
import { currentBackendPvcName, renderBackendPvc } from '../../../shared/storage/backend-storage.ts';

const UID = 'mig-uid';

function pvc(name: string, labels: Record<string, string>, more: { modes?: string[]; deleting?: boolean } = {}): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'default', labels, ...(more.deleting ? { deletionTimestamp: new Date(0) } : {}) },
    spec: { accessModes: more.modes ?? ['ReadWriteOnce'] },
    status: { phase: 'Bound', accessModes: more.modes ?? ['ReadWriteOnce'] },
  };
}
function migration(phase: string, pvcs?: { source: string; target: string }): VirtualMachineInstanceMigration {
  return {
    metadata: { name: 'm', namespace: 'default', uid: UID },
    spec: { vmiName: 'v' },
    status: { phase, ...(pvcs ? { migrationState: { sourcePersistentStatePVCName: pvcs.source, targetPersistentStatePVCName: pvcs.target } } : {}) },
  };
}
function vmi(migrationState?: NonNullable<VirtualMachineInstance['status']>['migrationState']): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'default', uid: 'vmi-uid', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'v', uid: 'vm-uid', controller: true }] },
    spec: { domain: { devices: { tpm: { persistent: true } } } } as VirtualMachineInstance['spec'],
    status: { phase: 'Running', volumeStatus: [{ name: 'persistent-state-for-this-vm', target: '', persistentVolumeClaimInfo: { claimName: 'src' } }], ...(migrationState ? { migrationState } : {}) },
  };
}
const mine = { 'kubevirt.io/migrationName': 'm' };
const vmis = { 'persistent-state-for': 'v' };

describe('the target pod\'s backend claim', () => {
  const cases: { name: string; sourceName: string | undefined; source: V1PersistentVolumeClaim | undefined; targets: V1PersistentVolumeClaim[]; want: ReturnType<typeof planTargetBackend> }[] = [
    { name: 'no volume status entry → KubeVirt\'s error', sourceName: undefined, source: undefined, targets: [], want: { kind: 'error', message: 'no backend-storage PVC found in VMI volume status' } },
    { name: 'the named claim is missing', sourceName: 'src', source: undefined, targets: [], want: { kind: 'error', message: 'backend-storage PVC src not found' } },
    { name: 'ReadWriteMany source → shared', sourceName: 'src', source: pvc('src', vmis, { modes: ['ReadWriteMany'] }), targets: [], want: { kind: 'use', pvcs: { source: 'src', target: 'src' } } },
    { name: 'ReadWriteOnce source → a target of its own', sourceName: 'src', source: pvc('src', vmis), targets: [], want: { kind: 'create', source: 'src' } },
    { name: 'its own target exists already (an earlier pass) → reused', sourceName: 'src', source: pvc('src', vmis), targets: [pvc('tgt', mine)], want: { kind: 'use', pvcs: { source: 'src', target: 'tgt' } } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const plan = planTargetBackend(c.sourceName, c.source, c.targets);
      // assert
      assert.deepEqual(plan, c.want);
    });
  }

  test('only live claims labelled with this migration\'s name are its own', () => {
    // arrange
    const claims = [pvc('a', mine), pvc('b', { 'kubevirt.io/migrationName': 'other' }), pvc('c', mine, { deleting: true }), pvc('d', vmis)];
    // act
    const own = migrationTargetPvcs(claims, migration('Pending'));
    // assert
    assert.deepEqual(own.map((p) => p.metadata?.name), ['a']);
  });

  test('the target claim is the VMI\'s shape, labelled for the migration, owned by the VM', () => {
    // act
    const claim = renderBackendPvc(vmi(), 'local', 'ReadWriteOnce', 'm');
    // assert
    assert.equal(claim.metadata?.generateName, 'persistent-state-for-v-');
    assert.deepEqual(claim.metadata?.labels, { 'kubevirt.io/migrationName': 'm', 'cdi.kubevirt.io/applyStorageProfile': 'true' });
    assert.equal(claim.metadata?.ownerReferences?.[0]?.uid, 'vm-uid');
    assert.equal(currentBackendPvcName(vmi()), 'src');
  });
});

describe('after the target pod', () => {
  const ready = { migrationUid: UID, targetNodeDomainReadyTimestamp: '2026-03-01T12:00:00Z' };
  const own = { source: 'src', target: 'tgt' };
  const cases: { name: string; migration: VirtualMachineInstanceMigration; vmi: VirtualMachineInstance; phase: string; target?: V1PersistentVolumeClaim; source?: V1PersistentVolumeClaim; want: ReturnType<typeof decideBackendFollowUp> }[] = [
    { name: 'shared claim → nothing, ever', migration: migration('Running', { source: 'src', target: 'src' }), vmi: vmi(ready), phase: 'Running', target: pvc('src', vmis), source: pvc('src', vmis), want: { kind: 'none' } },
    { name: 'target domain not ready yet → wait', migration: migration('Running', own), vmi: vmi({ migrationUid: UID }), phase: 'Running', target: pvc('tgt', mine), source: pvc('src', vmis), want: { kind: 'none' } },
    { name: 'target domain ready → hand the target over', migration: migration('Running', own), vmi: vmi(ready), phase: 'Running', target: pvc('tgt', mine), source: pvc('src', vmis), want: { kind: 'hand-off', target: 'tgt' } },
    { name: 'handed over → delete the source', migration: migration('Succeeded', own), vmi: vmi(ready), phase: 'Succeeded', target: pvc('tgt', vmis), source: pvc('src', vmis), want: { kind: 'delete-source', source: 'src' } },
    { name: 'source already going → done', migration: migration('Succeeded', own), vmi: vmi(ready), phase: 'Succeeded', target: pvc('tgt', vmis), source: pvc('src', vmis, { deleting: true }), want: { kind: 'none' } },
    { name: 'another migration\'s state on the VMI → not ours to hand over', migration: migration('Running', own), vmi: vmi({ ...ready, migrationUid: 'other' }), phase: 'Running', target: pvc('tgt', mine), source: pvc('src', vmis), want: { kind: 'none' } },
    { name: 'failed before the hand-off → delete the target', migration: migration('Failed', own), vmi: vmi({ migrationUid: UID, failed: true }), phase: 'Failed', target: pvc('tgt', mine), source: pvc('src', vmis), want: { kind: 'delete-target', target: 'tgt' } },
    { name: 'failed after the target domain was ready → delete the unhanded target', migration: migration('Failed', own), vmi: vmi({ ...ready, failed: true }), phase: 'Failed', target: pvc('tgt', mine), source: pvc('src', vmis), want: { kind: 'delete-target', target: 'tgt' } },
    { name: 'failed, the target already handed over → keep it', migration: migration('Failed', own), vmi: vmi({ migrationUid: UID, failed: true }), phase: 'Failed', target: pvc('tgt', vmis), source: pvc('src', vmis), want: { kind: 'none' } },
    { name: 'failed, target gone → nothing', migration: migration('Failed', own), vmi: vmi({ migrationUid: UID, failed: true }), phase: 'Failed', source: pvc('src', vmis), want: { kind: 'none' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const next = decideBackendFollowUp({ migration: c.migration, vmi: c.vmi, phase: c.phase, target: c.target, source: c.source });
      // assert
      assert.deepEqual(next, c.want);
    });
  }

  test('a migration without recorded names, or with a shared claim, has no own target', () => {
    // assert
    assert.equal(ownTargetPvcs(migration('Running')), undefined);
    assert.equal(ownTargetPvcs(migration('Running', { source: 'src', target: 'src' })), undefined);
    assert.deepEqual(ownTargetPvcs(migration('Running', own)), own);
  });
});

describe('the hand-off patch', () => {
  test('labels the target the VMI\'s and drops the migration label, only while it is still the migration\'s', () => {
    // arrange
    const ops = backendHandoffPatch('m', 'v');
    // act
    const handed = applyJsonPatch(pvc('tgt', { ...mine, 'cdi.kubevirt.io/applyStorageProfile': 'true' }), ops) as V1PersistentVolumeClaim;
    // assert
    assert.deepEqual(handed.metadata?.labels, { 'persistent-state-for': 'v', 'cdi.kubevirt.io/applyStorageProfile': 'true' });
    assert.throws(() => applyJsonPatch(pvc('tgt', { 'kubevirt.io/migrationName': 'other' }), ops));
  });
});
