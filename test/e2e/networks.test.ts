/**
 * Networks end to end (issue 16, reference-vm-vmi-depth §6), relay → queue → functions →
 * sandbox: a VMI with a Multus secondary network runs with the `k8s.v1.cni.cncf.io/networks`
 * annotation on its launcher pod, the sandbox (playing Multus) reports the attachment in
 * `k8s.v1.cni.cncf.io/network-status`, and the VMI's `status.interfaces` says so
 * (`multus-status`, the pod interface). A VMI with a discontinued binding gets
 * `Synchronized=False FailedCreateValidation` and no pod; a VM with one gets no VMI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { EVENTS, PODS, VMIS, VMS } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL } from '../../shared/api/well-known.ts';
import { hashedPodInterfaceName } from '../../shared/template/render-metadata.ts';
import { NS, queueIdle, startSlice, until, vmiManifest, vmManifest, type Slice } from './support.ts';

let s: Slice;
before(async () => {
  s = await startSlice();
});
after(async () => {
  await s.stop();
});

const SLIRP_MESSAGE = 'failed create validation: &StatusCause{Type:FieldValueInvalid,Message:Slirp interface support has been discontinued since v1.3,Field:spec.domain.devices.interfaces[0].slirp,}';

function withNetworks(name: string, interfaces: unknown[], networks: unknown[]): VirtualMachineInstance {
  const base = vmiManifest(name);
  return { ...base, spec: { ...base.spec, domain: { ...base.spec.domain, devices: { ...base.spec.domain.devices, interfaces } }, networks } } as VirtualMachineInstance;
}

describe('networks on the sandbox', () => {
  test('a Multus secondary network: the annotation, the network status, status.interfaces', async () => {
    // arrange
    const vmi = withNetworks('multus', [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }], [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'nad1' } }]);
    // act
    await s.kube.create(VMIS, vmi);
    // assert
    const podIface = hashedPodInterfaceName('sec');
    let got: VirtualMachineInstance | undefined;
    await until(
      'status.interfaces reports the Multus attachment',
      async () => (got = await s.kube.get(VMIS, NS, 'multus'))?.status?.phase === 'Running' && (got?.status?.interfaces ?? []).some((i) => i.name === 'sec' && (i.infoSource ?? '').includes('multus-status')),
      { problems: s.problems },
    );
    const sec = got!.status!.interfaces!.find((i) => i.name === 'sec')!;
    assert.equal(sec.podInterfaceName, podIface);
    assert.equal(got!.status!.interfaces!.find((i) => i.name === 'default')?.podInterfaceName, 'eth0');
    const [pod] = (await s.kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${got!.metadata?.uid}` })).items;
    assert.deepEqual(JSON.parse(pod!.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks'] ?? '[]'), [{ name: 'nad1', namespace: NS, interface: podIface }]);
    const status = JSON.parse(pod!.metadata?.annotations?.['k8s.v1.cni.cncf.io/network-status'] ?? '[]') as { name: string; interface: string }[];
    assert.deepEqual(status.map((e) => e.interface), ['eth0', podIface]);
  });

  test('a discontinued binding on a VMI: Synchronized=False FailedCreateValidation, no pod, no event', async () => {
    // arrange
    const vmi = withNetworks('slirp-vmi', [{ name: 'default', slirp: {} }], [{ name: 'default', pod: {} }]);
    // act
    await s.kube.create(VMIS, vmi);
    // assert
    let got: VirtualMachineInstance | undefined;
    await until('Synchronized=False', async () => ((got = await s.kube.get(VMIS, NS, 'slirp-vmi'))?.status?.conditions ?? []).some((c) => c.type === 'Synchronized' && c.status === 'False'), { problems: s.problems });
    await until('queues idle', () => queueIdle(s, ['vmi']));
    const sync = got!.status!.conditions!.find((c) => c.type === 'Synchronized')!;
    assert.deepEqual([sync.reason, sync.message], ['FailedCreateValidation', SLIRP_MESSAGE]);
    assert.equal(got!.status?.phase, 'Pending');
    assert.equal((await s.kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${got!.metadata?.uid}` })).items.length, 0, 'no pod');
    const events = (await s.kube.list(EVENTS, NS)).items as { involvedObject?: { name?: string }; reason?: string }[];
    assert.equal(events.filter((e) => e.involvedObject?.name === 'slirp-vmi').length, 0, 'no event');
  });

  test('a discontinued binding on a VM: no VMI, the failure on the VM', async () => {
    // arrange
    const vm = vmManifest('slirp-vm', { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.devices.interfaces = [{ name: 'default', slirp: {} } as never];
    vm.spec.template.spec!.networks = [{ name: 'default', pod: {} }];
    // act
    await s.kube.create(VMS, vm);
    // assert
    await until('the VM reports the failure', async () => ((await s.kube.get(VMS, NS, 'slirp-vm'))?.status?.conditions ?? []).some((c) => (c.message ?? '').includes('failed create validation')), { problems: s.problems });
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
    const failure = (await s.kube.get(VMS, NS, 'slirp-vm'))!.status!.conditions!.find((c) => (c.message ?? '').includes('failed create validation'))!;
    assert.equal(failure.message, `Failure while starting VMI: ${SLIRP_MESSAGE}`);
    assert.equal(await s.kube.get(VMIS, NS, 'slirp-vm'), undefined, 'no VMI');
  });
});
