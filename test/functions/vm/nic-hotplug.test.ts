/**
 * NIC hotplug, the VM side, as decision tables (reference-vm-vmi-depth §5 "NIC hotplug" and
 * syncRestartRequired's interface rule): what the network synchroniser asks of the VMI and the
 * template, and which interface/network changes need a restart.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Interface, Network, VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { planInterfaceSync } from '../../../functions/vm/network/interfaces-sync.ts';
import { networkRestartRequired } from '../../../functions/vm/network/restart-required.ts';
import { hashedPodInterfaceName } from '../../../shared/template/render-metadata.ts';

const pod: Interface = { name: 'default', masquerade: {} };
const podNet: Network = { name: 'default', pod: {} };
const sec: Interface = { name: 'sec', bridge: {} };
const secNet: Network = { name: 'sec', multus: { networkName: 'nad1' } };
const secStatus = { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: hashedPodInterfaceName('sec') };

function vm(interfaces: Interface[], networks: Network[]): VirtualMachine {
  return { metadata: { name: 'v', namespace: 'default' }, spec: { template: { spec: { domain: { devices: { interfaces } }, networks } } } } as VirtualMachine;
}
function vmi(interfaces: Interface[], networks: Network[], statusIfaces: object[] = [{ name: 'default' }], migratable = false): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'default' },
    spec: { domain: { devices: { interfaces } }, networks },
    status: { phase: 'Running', interfaces: statusIfaces, conditions: migratable ? [{ type: 'LiveMigratable', status: 'True' }] : [] },
  } as VirtualMachineInstance;
}
const names = (l: { name: string }[] | undefined) => l?.map((x) => x.name);

describe('the network synchroniser (planInterfaceSync)', () => {
  test('table: what the template asks of the VMI and which absent interfaces leave the template', () => {
    const absent = (i: Interface): Interface => ({ ...i, state: 'absent' });
    const cases: { name: string; vm: VirtualMachine; vmi?: VirtualMachineInstance; want: { vmi?: unknown; template?: unknown } }[] = [
      { name: 'nothing changed', vm: vm([pod, sec], [podNet, secNet]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }, secStatus]), want: {} },
      { name: 'a bridge interface added: appended with its network', vm: vm([pod, sec], [podNet, secNet]), vmi: vmi([pod], [podNet]), want: { vmi: { interfaces: [pod, sec], networks: [podNet, secNet] } } },
      { name: 'an SR-IOV interface added', vm: vm([pod, { name: 'sec', sriov: {} }], [podNet, secNet]), vmi: vmi([pod], [podNet]), want: { vmi: { interfaces: [pod, { name: 'sec', sriov: {} }], networks: [podNet, secNet] } } },
      { name: 'a masquerade interface added: not hot-pluggable', vm: vm([pod, { name: 'sec', masquerade: {} }], [podNet, secNet]), vmi: vmi([pod], [podNet]), want: {} },
      { name: 'an absent interface added: not plugged, and it leaves the template', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod], [podNet]), want: { template: { interfaces: [pod], networks: [podNet] } } },
      { name: 'set absent: the state copied (hashed pod names)', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }, secStatus]), want: { vmi: { interfaces: [pod, absent(sec)], networks: [podNet, secNet] } } },
      { name: 'set absent on an ordinal-named pod: not copied', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }, { ...secStatus, podInterfaceName: 'net1' }]), want: {} },
      { name: 'set absent before any pod name is known: not copied (ordinal assumed)', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }]), want: {} },
      { name: 'absent and still in status: kept', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod, absent(sec)], [podNet, secNet], [{ name: 'default' }, secStatus]), want: {} },
      { name: 'absent and gone from status: dropped from the VMI and the VM', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: vmi([pod, absent(sec)], [podNet, secNet]), want: { vmi: { interfaces: [pod], networks: [podNet] }, template: { interfaces: [pod], networks: [podNet] } } },
      { name: 'absent on the VMI, the template back to up: the VMI state is not changed back', vm: vm([pod, sec], [podNet, secNet]), vmi: vmi([pod, absent(sec)], [podNet, secNet], [{ name: 'default' }, secStatus]), want: {} },
      { name: 'a NAD changed on a migratable VMI: networkName copied', vm: vm([pod, sec], [podNet, { name: 'sec', multus: { networkName: 'nad2' } }]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }, secStatus], true), want: { vmi: { interfaces: [pod, sec], networks: [podNet, { name: 'sec', multus: { networkName: 'nad2' } }] } } },
      { name: 'a NAD changed on a non-migratable VMI: left (a restart is needed)', vm: vm([pod, sec], [podNet, { name: 'sec', multus: { networkName: 'nad2' } }]), vmi: vmi([pod, sec], [podNet, secNet], [{ name: 'default' }, secStatus]), want: {} },
      { name: 'no VMI: absent interfaces leave the template', vm: vm([pod, absent(sec)], [podNet, secNet]), want: { template: { interfaces: [pod], networks: [podNet] } } },
      { name: 'a VMI being deleted: nothing', vm: vm([pod, absent(sec)], [podNet, secNet]), vmi: { ...vmi([pod], [podNet]), metadata: { name: 'v', deletionTimestamp: '2026-03-01T12:00:00Z' } }, want: {} },
    ];
    for (const c of cases) {
      // act
      const got = planInterfaceSync(c.vm, c.vmi);
      // assert
      assert.deepEqual(got, c.want, c.name);
    }
  });
});

describe('syncRestartRequired, interfaces and networks (networkRestartRequired)', () => {
  test('table: the five cases that need a restart, and what is live', () => {
    const cases: { name: string; template: [Interface[], Network[]]; vmi: VirtualMachineInstance; want: boolean }[] = [
      { name: 'unchanged', template: [[pod, sec], [podNet, secNet]], vmi: vmi([pod, sec], [podNet, secNet]), want: false },
      { name: 'an interface added', template: [[pod, sec], [podNet, secNet]], vmi: vmi([pod], [podNet]), want: false },
      { name: 'a state change only', template: [[pod, { ...sec, state: 'absent' }], [podNet, secNet]], vmi: vmi([pod, sec], [podNet, secNet]), want: false },
      { name: 'an interface the VMI has removed', template: [[pod], [podNet, secNet]], vmi: vmi([pod, sec], [podNet, secNet]), want: true },
      { name: 'an interface changed (model)', template: [[pod, { ...sec, model: 'e1000' }], [podNet, secNet]], vmi: vmi([pod, sec], [podNet, secNet]), want: true },
      { name: 'the pod network added', template: [[pod, sec], [podNet, secNet]], vmi: vmi([sec], [secNet]), want: true },
      { name: 'a network the VMI has removed', template: [[pod, sec], [podNet]], vmi: vmi([pod, sec], [podNet, secNet]), want: true },
      { name: 'a NAD changed, not migratable', template: [[pod, sec], [podNet, { name: 'sec', multus: { networkName: 'nad2' } }]], vmi: vmi([pod, sec], [podNet, secNet]), want: true },
      { name: 'a NAD changed, migratable', template: [[pod, sec], [podNet, { name: 'sec', multus: { networkName: 'nad2' } }]], vmi: vmi([pod, sec], [podNet, secNet], [], true), want: false },
      { name: 'a network changed otherwise, migratable', template: [[pod, sec], [podNet, { name: 'sec', multus: { networkName: 'nad1', default: true } }]], vmi: vmi([pod, sec], [podNet, secNet], [], true), want: true },
    ];
    for (const c of cases) {
      // act
      const got = networkRestartRequired({ domain: { devices: { interfaces: c.template[0] } }, networks: c.template[1] }, c.vmi);
      // assert
      assert.equal(got, c.want, `${c.name} (template ${names(c.template[0])?.join(',')})`);
    }
  });
});
