/**
 * The clone controller end to end: the sandbox cluster with its storage side (provisioner, CSI
 * snapshotter) ← relay → SQLite queue → clone, snapshot, restore, VM and VMI functions
 * (LocalRuntime). A user's steps: a stopped VM on a claim, with labels, annotations, an interface
 * MAC and a firmware serial; a VirtualMachineClone of it into a new VM with label and annotation
 * filters, a new MAC and serial. The clone ends Succeeded, the new VM carries the patches, and the
 * temporary tmp-snapshot-<uid> / tmp-restore-<uid> are gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import { legacyFirmwareUuid } from '../../shared/api/firmware-uuid.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { EVENTS, PVCS, VM_CLONES, VM_RESTORES, VM_SNAPSHOTS, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

let s: Slice;

before(async () => {
  s = await startSlice({ storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 } });
});
after(async () => {
  await s?.stop();
});

/** A stopped VM on claim `<name>-data`, labelled and annotated, with one interface (a MAC) and a firmware serial. */
async function sourceVm(name: string): Promise<VirtualMachine> {
  await s.kube.create(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `${name}-data`, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS },
  });
  const vm = vmManifest(name, { runStrategy: 'Halted' } as Partial<VirtualMachine['spec']>);
  vm.metadata = { ...vm.metadata, labels: { app: 'web', 'team/owner': 'a', scratch: 'x' }, annotations: { 'note/keep': 'k', 'drop-me': 'd' } };
  const t = vm.spec.template;
  t.metadata = { ...t.metadata, labels: { ...t.metadata?.labels, tier: 'front' }, annotations: { 'tmpl/drop': 'x' } };
  t.spec!.domain.devices.disks = [...(t.spec!.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  t.spec!.domain.devices.interfaces = [{ name: 'default', masquerade: {}, macAddress: '02:00:00:aa:aa:aa' }];
  t.spec!.domain.firmware = { serial: 'serial-old' };
  t.spec!.networks = [{ name: 'default', pod: {} }];
  t.spec!.volumes = [...(t.spec!.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }];
  return s.kube.create(VMS, vm);
}

const getClone = (name: string) => s.kube.get(VM_CLONES, NS, name);
const conditions = (c: VirtualMachineClone | undefined) => (c?.status?.conditions ?? []).map((x) => `${x.type}=${x.status} ${x.reason ?? ''}`);
async function eventsOf(name: string): Promise<string[]> {
  const list = (await s.kube.list(EVENTS, NS, { fieldSelector: `involvedObject.name=${name}` })) as { items: { involvedObject?: { kind?: string }; type?: string; reason?: string }[] };
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineClone').map((e) => `${e.type} ${e.reason}`);
}

describe('clone end to end (relay → queue → clone, snapshot, restore functions → sandbox)', () => {
  test('a stopped VM cloned into a new VM: filters and a new MAC applied, Succeeded, the temporary snapshot and restore gone', async () => {
    // arrange
    await sourceVm('clone-src');
    await until('the source claim is bound', async () => (await s.kube.get(PVCS, NS, 'clone-src-data'))?.status?.phase === 'Bound', { problems: s.problems });
    // act
    const c = await s.kube.create(VM_CLONES, {
      apiVersion: 'clone.kubevirt.io/v1beta1',
      kind: 'VirtualMachineClone',
      metadata: { name: 'clone-1', namespace: NS },
      spec: {
        source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'clone-src' },
        target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'clone-dst' },
        labelFilters: ['*', '!scratch'],
        annotationFilters: ['note/*'],
        template: { annotationFilters: [] },
        newMacAddresses: { default: '02:00:00:bb:bb:bb' },
        newSMBiosSerial: 'serial-new',
      },
    });
    const uid = c.metadata?.uid ?? '';
    await until('the clone Succeeded', async () => (await getClone('clone-1'))?.status?.phase === 'Succeeded', { tries: 6000, problems: s.problems });
    await until('the temporary snapshot and restore are gone', async () => (await s.kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`)) === undefined && (await s.kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`)) === undefined, { tries: 6000, problems: s.problems });
    // assert: the clone
    const done = await getClone('clone-1');
    assert.deepEqual(conditions(done), ['Progressing=False Ready', 'Ready=True Ready']);
    assert.equal(done?.status?.targetName, 'clone-dst');
    assert.equal(done?.status?.snapshotName, undefined);
    assert.equal(done?.status?.restoreName, undefined);
    const events = await eventsOf('clone-1');
    for (const reason of ['SnapshotCreated', 'SnapshotReady', 'RestoreCreated', 'RestoreReady', 'TargetVMCreated', 'PVCBound']) assert.ok(events.includes(`Normal ${reason}`), `${reason} in ${events.join(', ')}`);
    // assert: the new VM, with the patches applied
    // The clone blanks the firmware UUID; virt-api's VM webhook gives the new VM a random one at create.
    const src = (await s.kube.get(VMS, NS, 'clone-src'))!;
    const dst = (await s.kube.get(VMS, NS, 'clone-dst'))!;
    const uuid = dst.spec.template.spec?.domain.firmware?.uuid;
    assert.ok(uuid && uuid !== src.spec.template.spec?.domain.firmware?.uuid, `its own firmware UUID (${uuid})`);
    assert.notEqual(uuid, legacyFirmwareUuid('clone-dst'), "the webhook's, not the controller's UUIDv5: the controller writes none");
    assert.deepEqual(dst.metadata?.labels, { app: 'web', 'team/owner': 'a' });
    assert.equal(dst.metadata?.annotations?.['note/keep'], 'k');
    assert.equal(dst.metadata?.annotations?.['drop-me'], undefined);
    assert.deepEqual(dst.spec.template.metadata?.annotations ?? {}, { 'kubevirt.io/pci-topology-version': 'v3' }, "every template annotation filtered out; the PCI topology version is the VM webhook's, at the new VM's create");
    assert.equal(dst.spec.template.metadata?.labels?.tier, 'front');
    assert.equal(dst.spec.template.spec?.domain.devices.interfaces?.[0]?.macAddress, '02:00:00:bb:bb:bb');
    assert.equal(dst.spec.template.spec?.domain.firmware?.serial, 'serial-new');
    const claim = dst.spec.template.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName;
    assert.ok(claim && claim !== 'clone-src-data', `its own claim (${claim})`);
    assert.equal((await s.kube.get(PVCS, NS, claim!))?.status?.phase, 'Bound');
    // the source is untouched
    assert.equal(src.spec.template.spec?.domain.devices.interfaces?.[0]?.macAddress, '02:00:00:aa:aa:aa');
    assert.equal(src.metadata?.labels?.scratch, 'x');
  });
});
