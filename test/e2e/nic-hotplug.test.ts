/**
 * NIC hotplug end to end (reference-vm-vmi-depth §5, §6; issue 16), relay → queue → VM and VMI
 * functions → sandbox, driven by the real kubectl, on both lanes. `kubectl patch` adds a bridge
 * interface and its Multus network to a running VM: the VM controller patches them into the VMI,
 * the VMI controller rewrites the launcher pod's `k8s.v1.cni.cncf.io/networks`, the sandbox's
 * kubelet (playing Multus' dynamic-networks controller) reports the attachment in the pod's
 * network status, the VMI reports it (`multus-status`) and virt-handler plugs it into the domain
 * — the same VMI and launcher pod, no `RestartRequired`. Then the interface is set `absent`: it is
 * unplugged and leaves the VMI, its status and the VM template.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { PODS, VMIS, VMS } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL } from '../../shared/api/well-known.ts';
import { hashedPodInterfaceName } from '../../shared/template/render-metadata.ts';
import { KUBECTL, type KubectlResult } from '../kubectl/support.ts';
import { kubectlFor, NS, startSlice, until, type Slice } from './support.ts';

let s: Slice;
let kubectl: (args: string[], stdin?: string) => Promise<KubectlResult>;

const VM = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: nic-vm
  namespace: ${NS}
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        resources:
          requests:
            memory: 128Mi
        devices:
          disks:
          - name: containerdisk
            disk: {}
          interfaces:
          - name: default
            masquerade: {}
      networks:
      - name: default
        pod: {}
      volumes:
      - name: containerdisk
        containerDisk:
          image: quay.io/kubevirt/cirros-container-disk-demo:v1.9.0
`;

const PLUG = JSON.stringify([
  { op: 'add', path: '/spec/template/spec/domain/devices/interfaces/-', value: { name: 'sec', bridge: {} } },
  { op: 'add', path: '/spec/template/spec/networks/-', value: { name: 'sec', multus: { networkName: 'nad1' } } },
]);
const UNPLUG = JSON.stringify([{ op: 'add', path: '/spec/template/spec/domain/devices/interfaces/1/state', value: 'absent' }]);

const has = (vmi: VirtualMachineInstance | undefined, name: string) => (vmi?.status?.interfaces ?? []).find((i) => i.name === name);

describe('NIC hotplug end to end (relay → queue → functions → sandbox, driven by kubectl)', { skip: KUBECTL ? false : 'no kubectl on this machine' }, () => {
  before(async () => {
    s = await startSlice({ nodes: 1, kubeconfigDir: true, timings: { vmiHotplugMs: 50 } });
    kubectl = kubectlFor(s);
  });
  after(() => s?.stop());

  test('a bridge interface + Multus network patched into a running VM is plugged live, then set absent and removed', async () => {
    // arrange
    const created = await kubectl(['create', '-f', '-'], VM);
    assert.equal(created.code, 0, created.stderr);
    await until('nic-vm Running with its pod interface reported', async () => {
      const vmi = await s.kube.get(VMIS, NS, 'nic-vm');
      return vmi?.status?.phase === 'Running' && has(vmi, 'default') !== undefined;
    }, { tries: 6000, problems: s.problems });
    const before = await s.kube.get(VMIS, NS, 'nic-vm');
    const uid = before!.metadata!.uid!;
    const pods = async () => (await s.kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${uid}` })).items;
    const podName = (await pods())[0]?.metadata?.name;

    // act: plug
    const plug = await kubectl(['patch', 'vm', 'nic-vm', '-n', NS, '--type=json', '-p', PLUG]);
    assert.equal(plug.code, 0, plug.stderr);
    await until('sec plugged: in the VMI spec, in status.interfaces from Multus and the domain, MigrationRequired gone', async () => {
      const vmi = await s.kube.get(VMIS, NS, 'nic-vm');
      const sec = has(vmi, 'sec');
      return (vmi?.spec.networks ?? []).some((n) => n.name === 'sec') && (sec?.infoSource ?? '').includes('domain') && (sec?.infoSource ?? '').includes('multus-status') && !vmi?.status?.conditions?.some((c) => c.type === 'MigrationRequired');
    }, { tries: 6000, problems: s.problems });
    const plugged = await s.kube.get(VMIS, NS, 'nic-vm');
    const vmPlugged = await s.kube.get(VMS, NS, 'nic-vm');
    const podPlugged = (await pods())[0];

    // act: unplug
    const unplug = await kubectl(['patch', 'vm', 'nic-vm', '-n', NS, '--type=json', '-p', UNPLUG]);
    assert.equal(unplug.code, 0, unplug.stderr);
    await until('sec gone from the VMI spec, its status and the VM template', async () => {
      const vmi = await s.kube.get(VMIS, NS, 'nic-vm');
      const vm = await s.kube.get(VMS, NS, 'nic-vm');
      const inVmi = (vmi?.spec.domain.devices.interfaces ?? []).some((i) => i.name === 'sec') || has(vmi, 'sec') !== undefined;
      const inVm = (vm?.spec.template.spec?.domain.devices.interfaces ?? []).some((i) => i.name === 'sec') || (vm?.spec.template.spec?.networks ?? []).some((n) => n.name === 'sec');
      return !inVmi && !inVm;
    }, { tries: 6000, problems: s.problems });
    const unplugged = await s.kube.get(VMIS, NS, 'nic-vm');
    const vmUnplugged = await s.kube.get(VMS, NS, 'nic-vm');
    const podUnplugged = (await pods())[0];

    // assert
    const h = hashedPodInterfaceName('sec');
    assert.equal(plugged?.metadata?.uid, uid, 'the same VMI (no restart)');
    assert.deepEqual(plugged?.spec.domain.devices.interfaces, [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }]);
    assert.equal(has(plugged, 'sec')?.podInterfaceName, h);
    assert.equal(vmPlugged?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'no RestartRequired after the plug');
    assert.equal(podPlugged?.metadata?.name, podName, 'the same launcher pod');
    assert.deepEqual(JSON.parse(podPlugged?.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'] ?? '[]'), [{ name: 'nad1', namespace: NS, interface: h }]);
    assert.deepEqual((JSON.parse(podPlugged?.metadata?.annotations?.['k8s.v1.cni.cncf.io/network-status'] ?? '[]') as { interface: string }[]).map((e) => e.interface), ['eth0', h]);
    assert.equal(unplugged?.metadata?.uid, uid, 'the same VMI after the unplug');
    assert.deepEqual(unplugged?.spec.networks, [{ name: 'default', pod: {} }]);
    assert.deepEqual(vmUnplugged?.spec.template.spec?.networks, [{ name: 'default', pod: {} }]);
    assert.equal(vmUnplugged?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'no RestartRequired after the unplug');
    assert.equal(podUnplugged?.metadata?.name, podName, 'still the same launcher pod');
    assert.deepEqual((JSON.parse(podUnplugged?.metadata?.annotations?.['k8s.v1.cni.cncf.io/network-status'] ?? '[]') as { interface: string }[]).map((e) => e.interface), ['eth0']);
    assert.equal((await pods()).length, 1, 'no migration, no new pod');
  });
});
