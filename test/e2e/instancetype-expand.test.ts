/**
 * The `expand` instance type reference policy and the firmware UUID synchroniser end to end
 * (reference-vm-vmi-depth §1.6, §7): relay → queue → VM and VMI functions → sandbox, on both lanes.
 * With `spec.configuration.instancetype.referencePolicy: expand` on the KubeVirt CR, a VM created
 * with `spec.instancetype` and `spec.preference` ends with both expanded into its own spec, no
 * matcher and no status ref, and runs from that spec; a VM whose template lost its firmware UUID
 * (virt-api's VM webhook gives one at create only) gets the UUIDv5 of its name written into its
 * template after its VMI started with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { legacyFirmwareUuid } from '../../shared/api/firmware-uuid.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, CONTROLLER_REVISIONS, KUBEVIRTS, VMIS, VMS } from '../../shared/api/resources.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

describe('instance types under referencePolicy expand, and the firmware UUID, end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ nodes: 1, start: false });
    // Before the runtime starts: the controllers' cached cluster config reads it on first use.
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { instancetype: { referencePolicy: 'expand' } } } } });
    await s.kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'e2e-ex.small' }, spec: { cpu: { guest: 2 }, memory: { guest: '256Mi' } } });
    await s.kube.create(CLUSTER_PREFERENCES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterPreference', metadata: { name: 'e2e-ex.cirros' }, spec: { devices: { preferredDiskBus: 'sata' } } });
    s.rt.start();
  });
  after(async () => {
    await s?.stop();
  });

  test('a VM created with spec.instancetype ends with the expanded spec and no matcher, and runs from it', async () => {
    // arrange
    const vm = vmManifest('ex-e2e', { runStrategy: 'Always', instancetype: { name: 'e2e-ex.small' }, preference: { name: 'e2e-ex.cirros' } } as Partial<VirtualMachine['spec']>);
    // The instance type gives the memory: a VM of its own would conflict.
    delete vm.spec.template.spec!.domain.resources;
    // And no disk bus: the preference fills it.
    vm.spec.template.spec!.domain.devices.disks = [{ name: 'containerdisk', disk: {} }];
    await s.kube.create(VMS, vm);
    // act
    await until('ex-e2e Running', async () => (await s.kube.get(VMIS, NS, 'ex-e2e'))?.status?.phase === 'Running', { tries: 6000, problems: s.problems });
    // assert
    const got = await s.kube.get(VMS, NS, 'ex-e2e');
    assert.equal(got?.spec.instancetype, undefined, 'no instance type matcher');
    assert.equal(got?.spec.preference, undefined, 'no preference matcher');
    assert.equal(got?.status?.instancetypeRef, undefined);
    assert.equal(got?.status?.preferenceRef, undefined);
    const domain = got?.spec.template.spec?.domain;
    assert.deepEqual(domain?.cpu, { sockets: 2, cores: 1, threads: 1 }, "the instance type's 2 vCPUs, as sockets");
    assert.equal(domain?.memory?.guest, '256Mi');
    assert.deepEqual(domain?.devices.disks, [{ name: 'containerdisk', disk: { bus: 'sata' } }], 'the preferred disk bus');
    assert.deepEqual(got?.spec.template.spec?.networks, [{ name: 'default', pod: {} }], 'the default pod network, written into the spec');
    assert.equal(domain?.machine?.type, 'q35', 'the cluster defaults');
    const revisions = (await s.kube.list(CONTROLLER_REVISIONS, NS)).items.filter((r) => r.metadata?.name?.startsWith('ex-e2e-'));
    assert.deepEqual(revisions.map((r) => r.metadata?.name), [], 'nothing pinned');
    const vmi = await s.kube.get(VMIS, NS, 'ex-e2e');
    assert.equal(vmi?.spec.domain.cpu?.sockets, 2);
    assert.equal(vmi?.spec.domain.memory?.guest, '256Mi');
    assert.equal(vmi?.spec.domain.devices.disks?.[0]?.disk?.bus, 'sata');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-instancetype-name'], undefined, 'the VMI names no instance type');
    assert.equal(vmi?.spec.domain.firmware?.uuid, got?.spec.template.spec?.domain.firmware?.uuid, "and its firmware UUID (virt-api's VM webhook's, kept by the expansion)");
  });

  test('a VM whose template lost its firmware UUID runs with the UUIDv5 of its name, then gets it in its template; no restart', async () => {
    // arrange: created Halted (the webhook's UUID), the UUID removed by an update (no webhook default on update), then started
    await s.kube.create(VMS, vmManifest('fw-e2e', { runStrategy: 'Halted' }));
    await s.kube.patch(VMS, NS, 'fw-e2e', { type: 'json', ops: [{ op: 'remove', path: '/spec/template/spec/domain/firmware/uuid' }, { op: 'replace', path: '/spec/runStrategy', value: 'Always' }] });
    // act
    await until('fw-e2e Running', async () => (await s.kube.get(VMIS, NS, 'fw-e2e'))?.status?.phase === 'Running', { tries: 6000, problems: s.problems });
    const uuid = legacyFirmwareUuid('fw-e2e');
    await until('the UUIDv5 in the template', async () => (await s.kube.get(VMS, NS, 'fw-e2e'))?.spec.template.spec?.domain.firmware?.uuid === uuid, { problems: s.problems });
    // assert
    assert.equal((await s.kube.get(VMIS, NS, 'fw-e2e'))?.spec.domain.firmware?.uuid, uuid);
    assert.equal((await s.kube.get(VMS, NS, 'fw-e2e'))?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined);
  });
});
