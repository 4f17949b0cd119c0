/**
 * The sandbox virt-handler's NIC hotplug step (sandbox/nodes/nic-hotplug.ts): attach what
 * the pod has and the domain lacks, detach an absent one, and drop an absent one nobody reports.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextInterfaceStatus } from '../../../sandbox/nodes/nic-hotplug.ts';
import { macFor } from '../../../sandbox/nodes/vmi-running-status.ts';
import type { Vmi } from '../../../sandbox/nodes/objects.ts';

const primary = { name: 'default', infoSource: 'domain, guest-agent', interfaceName: 'eth0', podInterfaceName: 'eth0' };

function vmi(secState: string | undefined, interfaces: object[]): Vmi {
  const sec = { name: 'sec', bridge: {}, ...(secState ? { state: secState } : {}) };
  return { metadata: { name: 'v', namespace: 'default', uid: 'u1' }, spec: { domain: { devices: { interfaces: [{ name: 'default', masquerade: {} }, sec] } } }, status: { phase: 'Running', interfaces } };
}

test('table: one handler step over status.interfaces', () => {
  const cases: { name: string; vmi: Vmi; want: unknown }[] = [
    { name: 'nothing to do', vmi: vmi(undefined, [primary, { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: 'podx' }]), want: undefined },
    { name: 'not on the pod yet: wait', vmi: vmi(undefined, [primary]), want: undefined },
    {
      name: 'on the pod, not in the domain: attached',
      vmi: vmi(undefined, [primary, { name: 'sec', infoSource: 'multus-status', podInterfaceName: 'podx' }]),
      want: [primary, { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: 'podx', interfaceName: 'eth1', mac: macFor('u1', 'sec'), queueCount: 1, linkState: 'up' }],
    },
    { name: 'absent, in the domain: detached (what Multus reports stays)', vmi: vmi('absent', [primary, { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: 'podx', mac: 'm' }]), want: [primary, { name: 'sec', podInterfaceName: 'podx', infoSource: 'multus-status' }] },
    { name: 'absent, only Multus: wait for the pod to lose it', vmi: vmi('absent', [primary, { name: 'sec', infoSource: 'multus-status', podInterfaceName: 'podx' }]), want: undefined },
    { name: 'absent, reported by nobody: dropped', vmi: vmi('absent', [primary, { name: 'sec', podInterfaceName: 'podx' }]), want: [primary] },
  ];
  for (const c of cases) assert.deepEqual(nextInterfaceStatus(c.vmi), c.want, c.name);
});
