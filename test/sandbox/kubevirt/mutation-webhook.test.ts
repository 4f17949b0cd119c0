/**
 * virt-api's VMI, VM and migration create mutators as the sandbox wires them, on either lane: in-process
 * mutating admission on the emulator, the `virt-api-mutator` MutatingWebhookConfiguration the
 * real lane's kube-apiserver calls over HTTPS (sandbox/kubevirt/mutation-webhook.ts). A VMI and a
 * VM created by a client come back defaulted as on a KubeVirt cluster, and the mutators read the
 * cluster's KubeVirt CR at each create. The mutations themselves: vmi-mutation.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, VMIS, VMS } from '../../../shared/api/resources.ts';
import { VMI_FINALIZER } from '../../../shared/api/well-known.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { VIRT_API_MUTATOR } from '../../../sandbox/kubevirt/mutation-webhook.ts';
import { REAL } from '../../support/lanes.ts';
import { kubevirtAccountClient } from '../../support/virt-api-client.ts';

const NS = 'default';

const vmi = (name: string): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name, namespace: NS },
  spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } },
});

describe(`virt-api's create mutators in the sandbox (${REAL ? 'real control plane: MutatingWebhookConfiguration' : 'emulator: in-process admission'})`, () => {
  let sb: Sandbox;
  let kube: KubeClient;
  before(async () => {
    sb = await startSandbox({ nodes: 1 });
    kube = createKubeClient(sb.apiServer.kubeConfig('test'));
  });
  after(async () => sb?.stop());

  test('a VMI created by a client is non-root (runtimeUser 107), has a CPU model, the foreground-delete finalizer, Pending', async () => {
    // act
    const created = await kube.create(VMIS, vmi('mut-vmi'));
    // assert
    assert.equal(created.status?.runtimeUser, 107, 'virt-api marks it non-root (no Root gate)');
    assert.equal(created.spec.domain.cpu?.model, 'host-model');
    assert.deepEqual(created.metadata?.finalizers, [VMI_FINALIZER]);
    assert.equal(created.status?.phase, 'Pending');
    assert.match(created.spec.domain.firmware?.uuid ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(created.spec.domain.devices.interfaces, [{ name: 'default', bridge: {} }], "the pod network on the cluster's default interface");
    assert.equal(created.metadata?.annotations?.['kubevirt.io/pci-topology-version'], 'v3');
  });

  test('a VM created by a client gets a firmware UUID and serial, its machine type and the PCI topology version', async () => {
    // arrange
    const vm: VirtualMachine = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'mut-vm', namespace: NS }, spec: { runStrategy: 'Halted', template: { spec: vmi('x').spec } } };
    // act
    const created = await kube.create(VMS, vm);
    // assert
    const template = created.spec.template;
    assert.match(template.spec?.domain.firmware?.uuid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(template.spec?.domain.firmware?.serial ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(template.spec?.domain.machine?.type, 'q35');
    assert.equal(template.spec?.architecture, 'amd64');
    assert.equal(template.metadata?.annotations?.['kubevirt.io/pci-topology-version'], 'v3');
    assert.equal(created.metadata?.generation, 1, 'one write: the mutation is part of the create');
  });

  test('the mutators read the KubeVirt CR at each create: with the Root gate a VMI keeps runtimeUser 0; a CPU model from the CR', async () => {
    // arrange
    const spec = (await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt'))?.spec;
    await kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { cpuModel: 'Haswell', developerConfiguration: { featureGates: ['Root'] } } } } });
    try {
      // act
      const created = await kube.create(VMIS, vmi('mut-root'));
      // assert
      assert.equal(created.status?.runtimeUser, 0);
      assert.equal(created.spec.domain.cpu?.model, 'Haswell');
    } finally {
      await kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'json', ops: [{ op: 'replace', path: '/spec', value: spec }] });
    }
  });

  test('a migration created by a client gets the kubevirt.io/vmi-name label and the migrationJobFinalize finalizer (virt-api\'s migration mutator)', async () => {
    // arrange: the validator wants a running VMI (as virt-handler reports it)
    await kube.create(VMIS, vmi('mig-src'));
    await kubevirtAccountClient(sb.apiServer.kubeConfig('admin'), 'kubevirt-handler').patch(VMIS, NS, 'mig-src', { type: 'merge', body: { status: { phase: 'Running', nodeName: sb.nodeNames[0], conditions: [{ type: 'LiveMigratable', status: 'True' }] } } });
    // act
    const created = await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mut-mig', namespace: NS, labels: { mine: 'x' } }, spec: { vmiName: 'mig-src' } } as never);
    // assert
    assert.deepEqual(created.metadata?.labels, { mine: 'x', 'kubevirt.io/vmi-name': 'mig-src' });
    assert.deepEqual(created.metadata?.finalizers, ['kubevirt.io/migrationJobFinalize']);
  });

  test('real lane: virt-operator\'s configuration names the three mutators, fail closed: the VM one on CREATE, the VMI one on CREATE and UPDATE (its identity rule)', { skip: REAL ? false : 'the emulator runs the mutators in process: no configuration object' }, async () => {
    // act
    const config = await sb.apiServer.kubeConfig().makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: VIRT_API_MUTATOR });
    // assert
    assert.deepEqual(config.webhooks?.map((w) => [w.name, w.rules?.[0]?.resources, w.rules?.[0]?.operations, w.failurePolicy]), [
      ['virtualmachines-mutator.kubevirt.io', ['virtualmachines'], ['CREATE'], 'Fail'],
      ['virtualmachineinstances-mutator.kubevirt.io', ['virtualmachineinstances'], ['CREATE', 'UPDATE'], 'Fail'],
      ['migrations-mutator.kubevirt.io', ['virtualmachineinstancemigrations'], ['CREATE'], 'Fail'],
    ]);
  });
});
