/**
 * The controllers' network rules (reference-vm-vmi-depth §6), pure and table-driven: the
 * discontinued bindings and their exact message; `status.interfaces` from the pod's Multus
 * network status; and the sandbox's Multus network-status annotation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { interfacesFromPod, sameInterfaces } from '../../functions/vmi/network-status.ts';
import { multusNetworkStatus } from '../../sandbox/nodes/multus-status.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { createValidationMessage, discontinuedBindingCauses } from '../../shared/network/discontinued.ts';
import { hashedPodInterfaceName } from '../../shared/template/render-metadata.ts';

describe('discontinued bindings', () => {
  const spec = (interfaces: Record<string, unknown>[]) => ({ domain: { devices: { interfaces } } }) as never;
  const cases: { name: string; interfaces: Record<string, unknown>[]; fields: string[] }[] = [
    { name: 'masquerade and bridge pass', interfaces: [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }], fields: [] },
    { name: 'passtBinding (the binding, not the old field) passes', interfaces: [{ name: 'default', passtBinding: {} }], fields: [] },
    { name: 'slirp', interfaces: [{ name: 'default', slirp: {} }], fields: ['spec.domain.devices.interfaces[0].slirp'] },
    { name: 'passt and macvtap, in interface order', interfaces: [{ name: 'a', masquerade: {} }, { name: 'b', passt: {} }, { name: 'c', macvtap: {} }], fields: ['spec.domain.devices.interfaces[1].passt', 'spec.domain.devices.interfaces[2].macvtap'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const causes = discontinuedBindingCauses(spec(c.interfaces));
      // assert
      assert.deepEqual(causes.map((x) => x.field), c.fields);
    });
  }

  test("the message is KubeVirt's, verbatim: each cause as Go prints a StatusCause, joined by newlines", () => {
    // arrange
    const causes = discontinuedBindingCauses(spec([{ name: 'a', slirp: {} }, { name: 'b', macvtap: {} }]));
    // act
    const message = createValidationMessage(causes);
    // assert
    assert.equal(
      message,
      'failed create validation: &StatusCause{Type:FieldValueInvalid,Message:Slirp interface support has been discontinued since v1.3,Field:spec.domain.devices.interfaces[0].slirp,}\n' +
        '&StatusCause{Type:FieldValueInvalid,Message:Macvtap network binding has been discontinued since v1.3,Field:spec.domain.devices.interfaces[1].macvtap,}',
    );
  });
});

function vmi(networks: unknown[], interfaces?: unknown[]): VirtualMachineInstance {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'x', namespace: 'ns' }, spec: { domain: { devices: {} }, networks }, ...(interfaces ? { status: { interfaces } } : {}) } as VirtualMachineInstance;
}
function pod(status?: unknown[]): V1Pod {
  return { metadata: { name: 'p', annotations: status ? { 'k8s.v1.cni.cncf.io/network-status': JSON.stringify(status) } : {} } };
}

describe('status.interfaces from the network status', () => {
  const sec = hashedPodInterfaceName('sec');
  const networks = [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'nad1' } }];
  const cases: { name: string; vmi: VirtualMachineInstance; pod: V1Pod; want: unknown[] }[] = [
    { name: 'no annotation: the primary on eth0', vmi: vmi([{ name: 'default', pod: {} }]), pod: pod(), want: [{ name: 'default', podInterfaceName: 'eth0' }] },
    {
      name: 'a secondary reported by Multus, new: multus-status',
      vmi: vmi(networks),
      pod: pod([{ name: 'k8s-pod-network', interface: 'eth0', default: true }, { name: 'ns/nad1', interface: sec }]),
      want: [{ name: 'default', podInterfaceName: 'eth0' }, { name: 'sec', infoSource: 'multus-status', podInterfaceName: sec }],
    },
    {
      name: 'existing entries keep their fields; multus-status appended to infoSource',
      vmi: vmi(networks, [{ name: 'default', mac: '02:00', infoSource: 'domain, guest-agent' }, { name: 'sec', mac: '02:01', infoSource: 'domain, guest-agent' }]),
      pod: pod([{ name: 'k8s-pod-network', interface: 'eth0', default: true }, { name: 'ns/nad1', interface: sec }]),
      want: [{ name: 'default', mac: '02:00', infoSource: 'domain, guest-agent', podInterfaceName: 'eth0' }, { name: 'sec', mac: '02:01', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: sec }],
    },
    {
      name: 'no longer reported: multus-status removed, the entry kept',
      vmi: vmi(networks, [{ name: 'sec', infoSource: 'domain, multus-status', podInterfaceName: sec }]),
      pod: pod([{ name: 'k8s-pod-network', interface: 'eth0', default: true }]),
      want: [{ name: 'default', podInterfaceName: 'eth0' }, { name: 'sec', infoSource: 'domain', podInterfaceName: sec }],
    },
    {
      name: 'ordinal naming when the pod uses net<N>; the default entry names the primary interface',
      vmi: vmi(networks),
      pod: pod([{ name: 'k8s-pod-network', interface: 'eth9', default: true }, { name: 'ns/nad1', interface: 'net1' }]),
      want: [{ name: 'default', podInterfaceName: 'eth9' }, { name: 'sec', infoSource: 'multus-status', podInterfaceName: 'net1' }],
    },
    {
      name: 'guest-agent discoveries (no spec network) are kept, last',
      vmi: vmi([{ name: 'default', pod: {} }], [{ name: '', interfaceName: 'docker0', infoSource: 'guest-agent' }]),
      pod: pod(),
      want: [{ name: 'default', podInterfaceName: 'eth0' }, { name: '', interfaceName: 'docker0', infoSource: 'guest-agent' }],
    },
    { name: 'an annotation that does not parse counts as empty', vmi: vmi([{ name: 'default', pod: {} }]), pod: { metadata: { annotations: { 'k8s.v1.cni.cncf.io/network-status': '{not json' } } }, want: [{ name: 'default', podInterfaceName: 'eth0' }] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = interfacesFromPod(c.vmi, c.pod);
      // assert
      assert.deepEqual(got, c.want);
    });
  }

  test('compared as sets sorted by name', () => {
    // arrange
    const a = [{ name: 'b', mac: '1' }, { name: 'a', mac: '2' }];
    // act / assert
    assert.equal(sameInterfaces(a, [a[1]!, a[0]!]), true);
    assert.equal(sameInterfaces(a, [a[0]!]), false);
  });
});

describe('the sandbox playing Multus', () => {
  test('only pods that ask for Multus networks get a network status; the default on eth0 with the pod IP', () => {
    // arrange
    const asking = { metadata: { uid: 'u', namespace: 'ns', annotations: { 'k8s.v1.cni.cncf.io/networks': JSON.stringify([{ name: 'nad1', namespace: 'ns', mac: '02:aa', interface: 'podabc' }]) } } };
    // act
    const status = JSON.parse(multusNetworkStatus(asking, '10.244.0.5')!) as { name: string; interface: string; ips?: string[]; mac: string; default?: boolean }[];
    // assert
    assert.equal(multusNetworkStatus({ metadata: { annotations: {} } }, '10.0.0.1'), undefined);
    assert.deepEqual(status.map((s) => [s.name, s.interface, s.default ?? false]), [['k8s-pod-network', 'eth0', true], ['ns/nad1', 'podabc', false]]);
    assert.deepEqual(status[0]!.ips, ['10.244.0.5']);
    assert.equal(status[1]!.mac, '02:aa');
  });
});
