import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { legacyPdbsToDelete, pdbOwnerKey } from '../../../functions/disruption-budget/legacy-pdbs.ts';

const pdb = (name: string, owner: { kind: string; name: string; uid?: string; controller?: boolean } | undefined, extra: { ns?: string; deleting?: boolean } = {}): V1PodDisruptionBudget => ({
  metadata: {
    name,
    namespace: extra.ns ?? 'default',
    ...(extra.deleting ? { deletionTimestamp: new Date('2026-12-01T11:00:00Z') } : {}),
    ...(owner ? { ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: owner.kind, name: owner.name, uid: owner.uid ?? 'any', controller: owner.controller ?? true }] } : {}),
  },
});

test('legacy PDBs are matched by controller owner name (not UID), kind VMI, same namespace, not terminating', () => {
  const pdbs = [
    pdb('kubevirt-disruption-budget-abc', { kind: 'VirtualMachineInstance', name: 'vm1', uid: 'old-uid' }),
    pdb('kubevirt-migration-pdb-x', { kind: 'VirtualMachineInstance', name: 'vm1' }),
    pdb('other-vmi', { kind: 'VirtualMachineInstance', name: 'vm2' }),
    pdb('deployment-owned', { kind: 'Deployment', name: 'vm1' }),
    pdb('not-controller', { kind: 'VirtualMachineInstance', name: 'vm1', controller: false }),
    pdb('other-ns', { kind: 'VirtualMachineInstance', name: 'vm1' }, { ns: 'elsewhere' }),
    pdb('terminating', { kind: 'VirtualMachineInstance', name: 'vm1' }, { deleting: true }),
    pdb('ownerless', undefined),
  ];
  assert.deepEqual(legacyPdbsToDelete(pdbs, 'default', 'vm1').map((p) => p.metadata?.name), ['kubevirt-disruption-budget-abc', 'kubevirt-migration-pdb-x']);
  assert.equal(pdbOwnerKey(pdbs[0]!), 'default/vm1');
  assert.equal(pdbOwnerKey(pdbs[3]!), undefined, 'only VMI owners count');
});
