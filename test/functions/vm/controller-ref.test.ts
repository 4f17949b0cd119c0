/**
 * The VM controller's claim on the VMI of its name (KubeVirt's controller-ref manager, issue 38
 * item 6): an orphan is adopted (a merge patch making this VM its controller), one controlled by
 * another owner is left alone and reported, and nothing is adopted while the VM or the VMI is
 * being deleted. One reconcile pass against the emulator API server each.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { NS, objectActions, sandboxPerFile, vmManifest } from './support.ts';

const ctx = sandboxPerFile();

/** A VMI of `name` as a user (or a controller that went away) left it, with the given owner references. */
async function vmi(name: string, ownerReferences?: NonNullable<VirtualMachineInstance['metadata']>['ownerReferences']): Promise<VirtualMachineInstance> {
  return ctx.h.kube.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS, ...(ownerReferences ? { ownerReferences } : {}) },
    spec: { domain: { devices: {} } },
  } as VirtualMachineInstance);
}

describe('the VM claims the VMI of its name', () => {
  test('an orphan VMI is adopted: this VM its controller, and it counts as the VM\'s VMI', async () => {
    // arrange
    const vm = await ctx.h.kube.create(VMS, vmManifest('adopt-1', { runStrategy: 'Always' }));
    const orphan = await vmi('adopt-1');
    ctx.server.audit.clear();
    // act
    await reconcileVm(`${NS}/adopt-1`, ctx.h.deps);
    // assert
    const adopted = await ctx.h.kube.get(VMIS, NS, 'adopt-1');
    assert.deepEqual(adopted?.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'adopt-1', uid: vm.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    assert.equal(adopted?.metadata?.uid, orphan.metadata?.uid, 'the same VMI, not a new one');
    assert.ok(objectActions(ctx.server).includes('patch virtualmachineinstances adopt-1'), 'adopted by a patch');
    assert.ok(!objectActions(ctx.server).includes('create virtualmachineinstances adopt-1'), 'no second VMI tried');
    const status = (await ctx.h.kube.get(VMS, NS, 'adopt-1'))?.status;
    assert.equal(status?.created, true, 'the adopted VMI is the VM\'s');
    assert.ok(!status?.conditions?.some((c) => c.reason === 'VMIExists'), `no "not controlled" failure; got ${JSON.stringify(status?.conditions)}`);
  });

  const notAdopted: { name: string; ownedByOther?: boolean; deleting?: 'vm' }[] = [
    { name: 'a VMI controlled by another owner', ownedByOther: true },
    { name: 'a VM being deleted', deleting: 'vm' },
  ];
  notAdopted.forEach((row, i) => {
    test(`not adopted: ${row.name}`, async () => {
      // arrange
      const name = `keep-${i}`;
      await ctx.h.kube.create(VMS, vmManifest(name, { runStrategy: 'Always' }, row.deleting ? ['example.com/hold'] : undefined));
      // The other owner exists (the API server's garbage collector drops references to missing ones).
      const other = row.ownedByOther ? await ctx.h.kube.create(VMS, vmManifest(`${name}-other`, { runStrategy: 'Halted' })) : undefined;
      await vmi(name, other ? [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: other.metadata?.name ?? '', uid: other.metadata?.uid ?? '', controller: true }] : undefined);
      if (row.deleting) await ctx.h.kube.delete(VMS, NS, name);
      const before = await ctx.h.kube.get(VMIS, NS, name);
      ctx.server.audit.clear();
      // act
      await reconcileVm(`${NS}/${name}`, ctx.h.deps).catch(() => undefined);
      // assert
      const after = await ctx.h.kube.get(VMIS, NS, name);
      assert.deepEqual(after?.metadata?.ownerReferences, before?.metadata?.ownerReferences, 'owner references untouched');
      assert.ok(!objectActions(ctx.server).includes(`patch virtualmachineinstances ${name}`), `no adoption patch; wrote ${JSON.stringify(objectActions(ctx.server))}`);
    });
  });
});
