/**
 * The VM reconcile's volume updates against the sandbox API server (reference-vm-vmi-depth §7,
 * `updateVolumesStrategy: Migration`): a running VM's claim switched to another one → the VMI's
 * `status.migratedVolumes` and volumes in one patch, the VM's `volumeUpdateState`; a missing
 * destination → `VolumesChange=False` on the VMI; volumes that cannot be migrated →
 * `RestartRequired` with KubeVirt's message; the template set back mid-migration → cancelled, a
 * third claim → `VolumesUpdateError`; the VMI lost mid-migration → `ManualRecoveryRequired`, no
 * new VMI until the volumes are set back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { DATA_VOLUMES, PVCS, VMIS, VMS } from '../../../shared/api/resources.ts';
import { NS, objectActions, reconcileUntilSettled as settle, sandboxPerFile, setVmiStatus, vmManifest } from './support.ts';

const ctx = sandboxPerFile();
const reconcileUntilSettled = (key: string, maxPasses?: number) => settle(ctx.server, ctx.h, key, maxPasses);

/** A claim, Bound with its capacity when `bound`. */
async function claim(name: string, opts: { modes?: string[]; bound?: boolean; dataSourceRef?: boolean } = {}): Promise<void> {
  const spec = {
    accessModes: opts.modes ?? ['ReadWriteOnce'],
    volumeMode: 'Filesystem',
    resources: { requests: { storage: '1Gi' } },
    ...(opts.dataSourceRef ? { dataSourceRef: { apiGroup: 'cdi.kubevirt.io', kind: 'VolumeImportSource', name: name } } : {}),
  };
  await ctx.h.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec });
  if (opts.bound !== false) await ctx.h.kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase: 'Bound', capacity: { storage: '1Gi' } } } }, { subresource: 'status' });
}

/** A VM with a `data` disk on claim `source`, under the Migration volume-update strategy (or `strategy`). */
function vmWithClaim(name: string, source: string, strategy = 'Migration', disk: Record<string, unknown> = {}): VirtualMachine {
  const vm = vmManifest(name, { runStrategy: 'Always', updateVolumesStrategy: strategy });
  const spec = vm.spec.template.spec!;
  spec.domain.devices.disks!.push({ name: 'data', disk: { bus: 'virtio' }, ...disk });
  spec.volumes!.push({ name: 'data', persistentVolumeClaim: { claimName: source } });
  return vm;
}

/** Plays the VMI controller and virt-handler: the VMI Running, live- and storage-migratable. */
async function run(name: string, extra: Record<string, unknown> = {}): Promise<VirtualMachineInstance> {
  const conditions = [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }, { type: 'StorageLiveMigratable', status: 'True' }];
  const status = { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2026-03-01T12:00:00Z' }], conditions, ...extra };
  return ctx.h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status } });
}

async function started(vm: VirtualMachine, extra: Record<string, unknown> = {}): Promise<void> {
  const name = vm.metadata!.name!;
  await ctx.h.kube.create(VMS, vm);
  await reconcileUntilSettled(`${NS}/${name}`);
  await run(name, extra);
  await reconcileUntilSettled(`${NS}/${name}`);
}

const switchClaim = (name: string, claimName: string) =>
  ctx.h.kube.patch(VMS, NS, name, { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/volumes/1/persistentVolumeClaim/claimName', value: claimName }] });
const vmiClaim = (vmi: VirtualMachineInstance | undefined) => vmi?.spec.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName;
const vmCondition = async (name: string, type: string) => (await ctx.h.kube.get(VMS, NS, name))?.status?.conditions?.find((c) => c.type === type);
const vmiCondition = async (name: string, type: string) => (await ctx.h.kube.get(VMIS, NS, name))?.status?.conditions?.find((c) => c.type === type);

describe('VM volume updates (updateVolumesStrategy: Migration) against the sandbox API server', () => {
  test('a claim switched to an existing one: migratedVolumes and the new claim in one VMI patch, volumeUpdateState on the VM, no RestartRequired', async () => {
    // arrange
    await claim('vm-src');
    await claim('vm-dst', { modes: ['ReadWriteMany'] });
    await started(vmWithClaim('vol-ok', 'vm-src'));
    ctx.server.audit.clear();
    // act
    await switchClaim('vol-ok', 'vm-dst');
    const settled = await reconcileUntilSettled(`${NS}/vol-ok`);
    // assert
    const vmi = await ctx.h.kube.get(VMIS, NS, 'vol-ok');
    const vm = await ctx.h.kube.get(VMS, NS, 'vol-ok');
    const want = [{
      volumeName: 'data',
      sourcePVCInfo: { claimName: 'vm-src', volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], requests: { storage: '1Gi' }, capacity: { storage: '1Gi' } },
      destinationPVCInfo: { claimName: 'vm-dst', volumeMode: 'Filesystem', accessModes: ['ReadWriteMany'], requests: { storage: '1Gi' }, capacity: { storage: '1Gi' } },
    }];
    assert.deepEqual(vmi?.status?.migratedVolumes, want);
    assert.equal(vmiClaim(vmi), 'vm-dst', 'the VMI volume points at the destination');
    assert.deepEqual(vm?.status?.volumeUpdateState, { volumeMigrationState: { migratedVolumes: want } });
    assert.equal(await vmCondition('vol-ok', 'RestartRequired'), undefined, 'a claim change migrates, it needs no restart');
    assert.deepEqual(objectActions(ctx.server), ['patch virtualmachineinstances vol-ok', 'patch virtualmachines/status vol-ok'], 'one VMI patch, then the VM status');
    assert.deepEqual(settled.errors, []);
  });

  test('a destination claim that does not exist: VolumesChange=False on the VMI (mirrored to the VM), the VMI untouched; once it exists the migration goes ahead', async () => {
    // arrange
    await claim('nf-src');
    await started(vmWithClaim('vol-nf', 'nf-src'));
    // act
    await switchClaim('vol-nf', 'nf-missing');
    await reconcileUntilSettled(`${NS}/vol-nf`);
    const onVmi = await vmiCondition('vol-nf', 'VolumesChange');
    const onVm = await vmCondition('vol-nf', 'VolumesChange');
    const vmiBefore = await ctx.h.kube.get(VMIS, NS, 'vol-nf');
    await claim('nf-missing');
    await reconcileUntilSettled(`${NS}/vol-nf`);
    // assert
    assert.equal(onVmi?.status, 'False');
    assert.equal(onVmi?.message, "One of the destination volumes doesn't exist: the pvc nf-missing doesn't exist");
    assert.equal(onVm?.status, 'False', 'mirrored onto the VM');
    assert.equal(vmiClaim(vmiBefore), 'nf-src');
    assert.equal(vmiBefore?.status?.migratedVolumes, undefined);
    assert.equal(await vmCondition('vol-nf', 'RestartRequired'), undefined);
    const vmi = await ctx.h.kube.get(VMIS, NS, 'vol-nf');
    assert.equal(await vmiCondition('vol-nf', 'VolumesChange'), undefined, 'the False condition removed once the claim is there');
    assert.equal(vmiClaim(vmi), 'nf-missing');
    assert.equal(vmi?.status?.migratedVolumes?.[0]?.destinationPVCInfo?.claimName, 'nf-missing');
  });

  test('a missing destination DataVolume is reported the same way', async () => {
    // arrange
    await claim('dvnf-src');
    await started(vmWithClaim('vol-dvnf', 'dvnf-src'));
    // act
    await ctx.h.kube.patch(VMS, NS, 'vol-dvnf', { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/volumes/1', value: { name: 'data', dataVolume: { name: 'dvnf-dst' } } }] });
    await reconcileUntilSettled(`${NS}/vol-dvnf`);
    // assert
    assert.equal((await vmiCondition('vol-dvnf', 'VolumesChange'))?.message, "One of the destination volumes doesn't exist: the datavolume dvnf-dst doesn't exist");
  });

  const invalid: [string, () => Promise<VirtualMachine>, string][] = [
    ['a shareable disk', async () => vmWithClaim('vol-share', 'share-src', 'Migration', { shareable: true }), 'invalid volumes to update with migration: shareable: [data]'],
    ['a LUN disk', async () => {
      const vm = vmWithClaim('vol-lun', 'lun-src');
      vm.spec.template.spec!.domain.devices.disks![1] = { name: 'data', lun: {} };
      return vm;
    }, 'invalid volumes to update with migration: luns: [data]'],
  ];
  for (const [what, make, message] of invalid) {
    test(`${what}: RestartRequired with KubeVirt's message, the VMI untouched`, async () => {
      // arrange
      const vm = await make();
      const source = vm.spec.template.spec!.volumes![1]!.persistentVolumeClaim!.claimName;
      await claim(source);
      await claim(`${source}-dst`);
      await started(vm);
      // act
      await switchClaim(vm.metadata!.name!, `${source}-dst`);
      await reconcileUntilSettled(`${NS}/${vm.metadata!.name!}`);
      // assert
      const restart = await vmCondition(vm.metadata!.name!, 'RestartRequired');
      assert.equal(restart?.status, 'True');
      assert.equal(restart?.message, message);
      assert.equal(vmiClaim(await ctx.h.kube.get(VMIS, NS, vm.metadata!.name!)), source);
    });
  }

  test('a DataVolume destination not yet populated, on a claim without dataSourceRef (no CSI populators): RestartRequired', async () => {
    // arrange
    await claim('dv-src');
    await started(vmWithClaim('vol-dv', 'dv-src'));
    await ctx.h.kube.create(DATA_VOLUMES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'dv-dst', namespace: NS }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } });
    await claim('dv-dst');
    // act
    await ctx.h.kube.patch(VMS, NS, 'vol-dv', { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/volumes/1', value: { name: 'data', dataVolume: { name: 'dv-dst' } } }] });
    await reconcileUntilSettled(`${NS}/vol-dv`);
    // assert
    assert.equal((await vmCondition('vol-dv', 'RestartRequired'))?.message, "invalid volumes to update with migration: DV storage class isn't a CSI or not using volume populators: [data]");
  });

  test('an RWO claim left out of the migration: RestartRequired "cannot migrate the VM…"', async () => {
    // arrange: a hotplugged RWO volume the VMI reports in its volume status
    await claim('rwo-src');
    await claim('rwo-dst');
    const hotplugged = { name: 'extra', target: 'sdb', persistentVolumeClaimInfo: { claimName: 'rwo-extra', accessModes: ['ReadWriteOnce'] } };
    await started(vmWithClaim('vol-rwo', 'rwo-src'), { volumeStatus: [hotplugged] });
    // act
    await switchClaim('vol-rwo', 'rwo-dst');
    await reconcileUntilSettled(`${NS}/vol-rwo`);
    // assert
    assert.equal((await vmCondition('vol-rwo', 'RestartRequired'))?.message, 'cannot migrate the VM. The volume extra is RWO and not included in the migration volumes');
    assert.equal(vmiClaim(await ctx.h.kube.get(VMIS, NS, 'vol-rwo')), 'rwo-src');
  });

  test('updateVolumesStrategy: Replacement: a claim change is a restart, the VMI untouched', async () => {
    // arrange
    await claim('rep-src');
    await claim('rep-dst');
    await started(vmWithClaim('vol-rep', 'rep-src', 'Replacement'));
    // act
    await switchClaim('vol-rep', 'rep-dst');
    await reconcileUntilSettled(`${NS}/vol-rep`);
    // assert
    assert.equal((await vmCondition('vol-rep', 'RestartRequired'))?.message, 'a non-live-updatable field was changed in the template spec');
    assert.equal((await ctx.h.kube.get(VMIS, NS, 'vol-rep'))?.status?.migratedVolumes, undefined);
  });

  describe('mid-migration (VolumesChange=True on the VMI)', () => {
    /** Started on `<p>-src`, switched to `<p>-dst`, and marked VolumesChange=True as the VMI controller does. */
    async function migrating(name: string, p: string): Promise<void> {
      await claim(`${p}-src`);
      await claim(`${p}-dst`);
      await started(vmWithClaim(name, `${p}-src`));
      await switchClaim(name, `${p}-dst`);
      await reconcileUntilSettled(`${NS}/${name}`);
      const vmi = await ctx.h.kube.get(VMIS, NS, name);
      const conditions = [...(vmi?.status?.conditions ?? []), { type: 'VolumesChange', status: 'True', message: 'migrate volumes' }];
      await ctx.h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status: { conditions } } });
      await reconcileUntilSettled(`${NS}/${name}`);
    }

    test('the template set back to the source claim: the VMI back on it, VolumesChange=False VolumesChangeCancellation, migratedVolumes and the VM state dropped', async () => {
      // arrange
      await migrating('vol-cancel', 'cancel');
      // act
      await switchClaim('vol-cancel', 'cancel-src');
      const settled = await reconcileUntilSettled(`${NS}/vol-cancel`);
      // assert
      const vmi = await ctx.h.kube.get(VMIS, NS, 'vol-cancel');
      const change = vmi?.status?.conditions?.find((c) => c.type === 'VolumesChange');
      assert.equal(vmiClaim(vmi), 'cancel-src');
      assert.equal(change?.status, 'False');
      assert.equal(change?.reason, 'VolumesChangeCancellation');
      assert.equal(vmi?.status?.migratedVolumes, undefined);
      assert.deepEqual((await ctx.h.kube.get(VMS, NS, 'vol-cancel'))?.status?.volumeUpdateState, {});
      assert.deepEqual(settled.errors, []);
    });

    test('switched again to a third claim: VolumesUpdateError, the VMI left as it migrates', async () => {
      // arrange
      await migrating('vol-third', 'third');
      await claim('third-other');
      // act
      await switchClaim('vol-third', 'third-other');
      const settled = await reconcileUntilSettled(`${NS}/vol-third`, 3).catch((e: Error) => e);
      // assert
      assert.ok(settled instanceof Error, 'a requeued sync error never settles');
      const failure = await vmCondition('vol-third', 'Failure');
      assert.equal(failure?.reason, 'VolumesUpdateError');
      assert.equal(failure?.message, 'error encountered while handling volumes update requests: The volume can only be reverted to the previous version during the update');
      assert.equal(vmiClaim(await ctx.h.kube.get(VMIS, NS, 'vol-third')), 'third-dst');
    });

    for (const how of ['deleted', 'final (Failed)'] as const) {
      test(`the VMI ${how} mid-migration: ManualRecoveryRequired, no new VMI; the volumes set back clear it and the VM starts again`, async () => {
        // arrange
        const name = how === 'deleted' ? 'vol-lost' : 'vol-failed';
        await migrating(name, name);
        const before = await ctx.h.kube.get(VMIS, NS, name);
        // act: the VMI goes (deleted, or its node died and it Failed) while the VM shows VolumesChange=True
        if (how === 'deleted') {
          await ctx.h.kube.patch(VMIS, NS, name, { type: 'merge', body: { metadata: { finalizers: null } } });
          await ctx.h.kube.delete(VMIS, NS, name);
        } else {
          await setVmiStatus(ctx.h, name, { phase: 'Failed' }); // merged into the status; the VMI controller's part too (support.ts)
        }
        await reconcileUntilSettled(`${NS}/${name}`);
        const recovery = await vmCondition(name, 'ManualRecoveryRequired');
        const vmiWhileBlocked = await ctx.h.kube.get(VMIS, NS, name);
        await switchClaim(name, `${name}-src`);
        await reconcileUntilSettled(`${NS}/${name}`);
        // assert
        assert.equal(before?.status?.conditions?.some((c) => c.type === 'VolumesChange' && c.status === 'True'), true);
        assert.equal(recovery?.status, 'True');
        assert.equal(recovery?.reason, 'VMI was removed or was final during the volume migration');
        assert.ok(vmiWhileBlocked === undefined || vmiWhileBlocked.metadata?.uid === before?.metadata?.uid, 'ManualRecoveryRequired blocks a new start (Always)');
        assert.equal(await vmCondition(name, 'ManualRecoveryRequired'), undefined, 'cleared by the original volumes');
        assert.equal(await vmCondition(name, 'Failure'), undefined, 'the block is no failure (KubeVirt only logs it)');
        const vmi = await ctx.h.kube.get(VMIS, NS, name);
        assert.ok(vmi && vmi.metadata?.uid !== before?.metadata?.uid, 'a new VMI started');
        assert.equal(vmiClaim(vmi), `${name}-src`);
      });
    }
  });
});
