/**
 * Volume migration end to end (reference-vm-vmi-depth §7, `updateVolumesStrategy: Migration`,
 * issue 16): relay → SQLite queue → VM, VMI, workload-updater and migration functions → sandbox
 * (provisioner, scheduler, kubelet, virt-handler), on a sped-up clock, on both lanes. The KubeVirt
 * CR has the LiveUpdate rollout strategy and `workloadUpdateMethods: [LiveMigrate]`.
 *
 * - A running VM's PVC volume switched to another existing claim (what `kubectl patch` of the VM
 *   does): the VM controller records `status.migratedVolumes` and points the VMI at the new claim,
 *   the VMI controller marks it `VolumesChange=True`, the workload updater creates a migration
 *   labelled `kubevirt.io/volume-update-migration`, the target pod mounts the new claim, the target
 *   virt-handler finishes the copy (the condition and `migratedVolumes` gone), the migration
 *   Succeeds; the same VMI runs on the new claim.
 * - A VM switched to a claim that does not exist: `VolumesChange=False` with KubeVirt's message on
 *   the VMI and the VM, and nothing else moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { VOLUME_UPDATE_MIGRATION_LABEL } from '../../shared/api/vmi-eviction.ts';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

const SPEED = 10;

function claimManifest(name: string) {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } } };
}

/** A VM with a `data` disk on `claim`, under the Migration volume-update strategy. */
function vmOnClaim(name: string, claim: string): VirtualMachine {
  const vm = vmManifest(name, { runStrategy: 'Always', updateVolumesStrategy: 'Migration' });
  const spec = vm.spec.template.spec!;
  spec.domain.devices.disks = [...(spec.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  spec.volumes = [...(spec.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: claim } }];
  return vm;
}

const dataClaim = (volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] | undefined) => volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName;

describe('volume migration end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ speed: SPEED, nodes: 2, start: false, storage: { provisionMs: 100 } });
    // Before the runtime starts: the controllers' cached cluster config reads it on first use.
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { vmRolloutStrategy: 'LiveUpdate' }, workloadUpdateStrategy: { workloadUpdateMethods: ['LiveMigrate'] } } } });
    s.rt.start();
  });
  after(async () => {
    await s?.stop();
  });

  /** Creates the claims and the VM, and waits for the claims Bound and the VMI Running. */
  async function running(name: string, claims: readonly string[]): Promise<void> {
    for (const c of claims) await s.kube.create(PVCS, claimManifest(c));
    await s.kube.create(VMS, vmOnClaim(name, claims[0]!));
    await until(`${name}: the claims Bound and the VMI Running`, async () => {
      const bound = await Promise.all(claims.map(async (c) => (await s.kube.get(PVCS, NS, c))?.status?.phase === 'Bound'));
      return bound.every(Boolean) && (await s.kube.get(VMIS, NS, name))?.status?.phase === 'Running';
    }, { problems: s.problems, tries: 6000 });
  }
  const switchClaim = (name: string, claim: string) => s.kube.patch(VMS, NS, name, { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/volumes/1/persistentVolumeClaim/claimName', value: claim }] });

  test('a PVC volume switched to another claim: a volume-update migration Succeeds and the same VMI runs on the new claim', async () => {
    // arrange
    const name = 'volmig-ok';
    await running(name, ['volmig-src', 'volmig-dst']);
    const before = await s.kube.get(VMIS, NS, name);
    // act
    await switchClaim(name, 'volmig-dst');
    await until('a volume-update migration Succeeded and the VMI on the new claim, the volume change done', async () => {
      const vmi = await s.kube.get(VMIS, NS, name);
      const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === name);
      return (
        migrations.some((m) => m.status?.phase === 'Succeeded') &&
        dataClaim(vmi?.spec.volumes) === 'volmig-dst' &&
        vmi?.status?.migrationState?.completed === true &&
        !vmi.status.conditions?.some((c) => c.type === 'VolumesChange') &&
        (vmi.status.migratedVolumes ?? []).length === 0
      );
    }, { problems: s.problems, tries: 9000 });
    // assert
    const vmi = await s.kube.get(VMIS, NS, name);
    const vm = await s.kube.get(VMS, NS, name);
    const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === name);
    const pods = (await s.kube.list(PODS, NS, { labelSelector: `kubevirt.io/created-by=${vmi?.metadata?.uid ?? ''}` })).items as V1Pod[];
    const live = pods.filter((p) => p.spec?.nodeName === vmi?.status?.nodeName && p.status?.phase === 'Running');
    const claimsOf = (p: V1Pod) => (p.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
    const audit = s.sandbox.apiServer.audit.query();
    const marked = audit.some((e) => e.resource === 'virtualmachineinstances' && e.name === name && ((e.object as { status?: { conditions?: { type: string; status: string; message?: string }[] } }).status?.conditions ?? []).some((c) => c.type === 'VolumesChange' && c.status === 'True' && c.message === 'migrate volumes'));
    console.log(`volume migration: ${before?.status?.nodeName} → ${vmi?.status?.nodeName}, migrations ${migrations.map((m) => `${m.metadata?.name} ${JSON.stringify(m.metadata?.labels ?? {})} ${m.spec?.priority} ${m.status?.phase}`).join(', ')}`);
    assert.equal(vmi?.metadata?.uid, before?.metadata?.uid, 'the same VMI (no restart)');
    assert.equal(migrations.length, 1, 'one migration');
    const m = migrations[0]!;
    assert.equal(m.metadata?.labels?.[VOLUME_UPDATE_MIGRATION_LABEL], name);
    assert.ok(m.metadata?.name?.startsWith('kubevirt-workload-update-'), m.metadata?.name);
    assert.equal(m.spec?.priority, 'user-triggered');
    assert.ok(marked, 'the VMI controller marked it VolumesChange=True "migrate volumes" on the way');
    assert.notEqual(vmi?.status?.nodeName, before?.status?.nodeName, 'the domain moved to the target node');
    assert.equal(live.length, 1, `one running launcher on ${vmi?.status?.nodeName}: ${pods.map((p) => `${p.metadata?.name}@${p.spec?.nodeName}:${p.status?.phase}`).join(', ')}`);
    assert.ok(claimsOf(live[0]!).includes('volmig-dst') && !claimsOf(live[0]!).includes('volmig-src'), `the target launcher mounts the new claim: ${claimsOf(live[0]!).join(', ')}`);
    const recorded = vm?.status?.volumeUpdateState?.volumeMigrationState?.migratedVolumes ?? [];
    assert.deepEqual(recorded.map((v) => [v.volumeName, v.sourcePVCInfo?.claimName, v.destinationPVCInfo?.claimName]), [['data', 'volmig-src', 'volmig-dst']]);
    assert.equal(vm?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'no restart needed');
    assert.equal(vm?.status?.conditions?.find((c) => c.type === 'ManualRecoveryRequired'), undefined);
  });

  test('a VM switched to a claim that does not exist: VolumesChange=False on the VMI and the VM, the VMI left on its claim', async () => {
    // arrange
    const name = 'volmig-missing';
    await running(name, ['volmig-missing-src']);
    // act
    await switchClaim(name, 'volmig-no-such-claim');
    await until('VolumesChange=False on the VM (mirrored from the VMI)', async () => (await s.kube.get(VMS, NS, name))?.status?.conditions?.some((c) => c.type === 'VolumesChange' && c.status === 'False') ?? false, { problems: s.problems, tries: 6000 });
    // assert
    const vmi = await s.kube.get(VMIS, NS, name);
    const cond = vmi?.status?.conditions?.find((c) => c.type === 'VolumesChange');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.message, "One of the destination volumes doesn't exist: the pvc volmig-no-such-claim doesn't exist");
    assert.equal(dataClaim(vmi?.spec.volumes), 'volmig-missing-src');
    assert.equal(vmi?.status?.migratedVolumes, undefined);
    const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === name);
    assert.equal(migrations.length, 0, 'nothing to migrate');
  });
});
