/**
 * NIC hotplug, the VM side, against the sandbox API server (reference-vm-vmi-depth §5): a bridge
 * interface and its Multus network added to a running VM's template are patched into the VMI
 * (test + add of both lists) with no RestartRequired; set `absent`, the state is copied; once
 * virt-handler no longer reports it, it leaves the VMI and the VM; an interface removed from the
 * the VM started with, removed from the template (not set absent), needs a restart; a NAD changed on a migratable VMI is copied.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import { hashedPodInterfaceName } from '../../../shared/template/render-metadata.ts';
import { harness, NS, objectActions, reconcileUntilSettled, vmManifest, type Harness, startKubevirtApiServer } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startKubevirtApiServer();
  h = harness(server);
});
after(() => server.close());

const SEC_STATUS = { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: hashedPodInterfaceName('sec') };

function netVm(name: string): VirtualMachine {
  const vm = vmManifest(name, { runStrategy: 'Always' });
  vm.spec.template.spec!.domain.devices.interfaces = [{ name: 'default', masquerade: {} }];
  vm.spec.template.spec!.networks = [{ name: 'default', pod: {} }];
  return vm;
}

/** Plays the VMI controller and virt-handler: Running, migratable, the interfaces reported. */
async function report(name: string, interfaces: object[]): Promise<VirtualMachineInstance> {
  const status = { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2026-03-01T12:00:00Z' }], conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }], interfaces };
  return h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status } });
}

async function started(name: string): Promise<void> {
  await h.kube.create(VMS, netVm(name));
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  await report(name, [{ name: 'default', infoSource: 'domain, guest-agent', podInterfaceName: 'eth0' }]);
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  server.audit.clear();
}

/** Started, `sec` hot-plugged into the VMI and reported by virt-handler. */
async function plugged(name: string): Promise<void> {
  await started(name);
  await addSec(name);
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  await report(name, [{ name: 'default', infoSource: 'domain, guest-agent', podInterfaceName: 'eth0' }, SEC_STATUS]);
}

const addSec = (name: string) =>
  h.kube.patch(VMS, NS, name, {
    type: 'json',
    ops: [
      { op: 'add', path: '/spec/template/spec/domain/devices/interfaces/-', value: { name: 'sec', bridge: {} } },
      { op: 'add', path: '/spec/template/spec/networks/-', value: { name: 'sec', multus: { networkName: 'nad1' } } },
    ],
  });
const restartCondition = async (name: string) => (await h.kube.get(VMS, NS, name))?.status?.conditions?.find((c) => c.type === 'RestartRequired');
describe('NIC hotplug, VM side, against the sandbox API server', () => {
  test('a bridge interface + Multus network added to a running VM: patched into the VMI, no RestartRequired', async () => {
    // arrange
    await started('nic-plug');
    // act
    await addSec('nic-plug');
    const settled = await reconcileUntilSettled(server, h, `${NS}/nic-plug`);
    // assert
    const vmi = await h.kube.get(VMIS, NS, 'nic-plug');
    assert.deepEqual(vmi?.spec.domain.devices.interfaces, [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }]);
    assert.deepEqual(vmi?.spec.networks, [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'nad1' } }]);
    assert.deepEqual(objectActions(server), ['patch virtualmachineinstances nic-plug', 'patch virtualmachines/status nic-plug'], 'one VMI patch, then the status (generations)');
    assert.equal(await restartCondition('nic-plug'), undefined);
    assert.deepEqual(settled.errors, []);
  });

  test('set absent: the state copied to the VMI; once virt-handler stops reporting it, it leaves the VMI and the VM', async () => {
    // arrange
    await plugged('nic-unplug');
    // act: absent
    await h.kube.patch(VMS, NS, 'nic-unplug', { type: 'json', ops: [{ op: 'add', path: '/spec/template/spec/domain/devices/interfaces/1/state', value: 'absent' }] });
    await reconcileUntilSettled(server, h, `${NS}/nic-unplug`);
    const marked = await h.kube.get(VMIS, NS, 'nic-unplug');
    const templateMarked = (await h.kube.get(VMS, NS, 'nic-unplug'))?.spec.template.spec?.domain.devices.interfaces;
    // act: unplugged (virt-handler no longer reports it)
    await report('nic-unplug', [{ name: 'default', infoSource: 'domain, guest-agent', podInterfaceName: 'eth0' }]);
    server.audit.clear();
    await reconcileUntilSettled(server, h, `${NS}/nic-unplug`);
    // assert
    assert.deepEqual(marked?.spec.domain.devices.interfaces?.[1], { name: 'sec', bridge: {}, state: 'absent' });
    assert.equal(templateMarked?.length, 2, 'kept in the template while the VMI reports it');
    const vmi = await h.kube.get(VMIS, NS, 'nic-unplug');
    const vm = await h.kube.get(VMS, NS, 'nic-unplug');
    assert.deepEqual(vmi?.spec.domain.devices.interfaces, [{ name: 'default', masquerade: {} }]);
    assert.deepEqual(vmi?.spec.networks, [{ name: 'default', pod: {} }]);
    assert.deepEqual(vm?.spec.template.spec?.domain.devices.interfaces, [{ name: 'default', masquerade: {} }]);
    assert.deepEqual(vm?.spec.template.spec?.networks, [{ name: 'default', pod: {} }]);
    const actions = objectActions(server);
    assert.ok(actions.indexOf('patch virtualmachineinstances nic-unplug') < actions.indexOf('patch virtualmachines nic-unplug'), actions.join('\n'));
    assert.equal(await restartCondition('nic-unplug'), undefined);
  });

  test('an interface the VM started with, removed from the template instead of set absent: RestartRequired, the VMI untouched', async () => {
    // arrange
    const vm = netVm('nic-removed');
    vm.spec.template.spec!.domain.devices.interfaces!.push({ name: 'sec', bridge: {} });
    vm.spec.template.spec!.networks!.push({ name: 'sec', multus: { networkName: 'nad1' } });
    await h.kube.create(VMS, vm);
    await reconcileUntilSettled(server, h, `${NS}/nic-removed`);
    await report('nic-removed', [{ name: 'default', infoSource: 'domain, guest-agent', podInterfaceName: 'eth0' }, SEC_STATUS]);
    await reconcileUntilSettled(server, h, `${NS}/nic-removed`);
    // act
    await h.kube.patch(VMS, NS, 'nic-removed', { type: 'json', ops: [{ op: 'remove', path: '/spec/template/spec/domain/devices/interfaces/1' }, { op: 'remove', path: '/spec/template/spec/networks/1' }] });
    await reconcileUntilSettled(server, h, `${NS}/nic-removed`);
    // assert
    assert.equal((await restartCondition('nic-removed'))?.message, 'a non-live-updatable field was changed in the template spec');
    assert.equal((await h.kube.get(VMIS, NS, 'nic-removed'))?.spec.domain.devices.interfaces?.length, 2);
  });

  test('a NAD changed on a migratable VMI: the networkName copied, no RestartRequired', async () => {
    // arrange
    await plugged('nic-nad');
    // act
    await h.kube.patch(VMS, NS, 'nic-nad', { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/networks/1/multus/networkName', value: 'nad2' }] });
    await reconcileUntilSettled(server, h, `${NS}/nic-nad`);
    // assert
    assert.deepEqual((await h.kube.get(VMIS, NS, 'nic-nad'))?.spec.networks?.[1], { name: 'sec', multus: { networkName: 'nad2' } });
    assert.equal(await restartCondition('nic-nad'), undefined);
  });
});
