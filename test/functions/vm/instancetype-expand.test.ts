/**
 * The instance type reference policies `expand` and `expandAll` (reference-vm-vmi-depth §1.6),
 * against the sandbox API server: the VM's spec rewritten with its instance type and preference
 * expanded (default disks and interface, the instance type and preference, the cluster's VMI spec
 * defaults), the matchers and status refs gone, the revisions they pinned deleted; `expand` leaves
 * a VM alone once a revision is pinned; the errors and reasons KubeVirt reports.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeVirt, VirtualMachine } from '../../../shared/api/index.ts';
import { LATEST_OBSERVED_API_VERSION_ANNOTATION, STORAGE_OBSERVED_API_VERSION_ANNOTATION, VM_CONTROLLER_FINALIZER } from '../../../shared/api/well-known.ts';
import { InvalidInputError } from '../../../shared/errors.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, CONTROLLER_REVISIONS, VMIS, VMS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../../shared/config/cluster-config.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { CONTROLLER, harness, NS, objectActions, reconcileUntilSettled, type Harness, startKubevirtApiServer } from './support.ts';

let server: ApiServer;
let h: Harness;
let config: ClusterConfig;

const policy = (referencePolicy: string) => clusterConfigFromKubeVirt({ spec: { configuration: { instancetype: { referencePolicy } } } } as KubeVirt);

before(async () => {
  server = await startKubevirtApiServer();
  const kube = harness(server).kube;
  await kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'ex.small' }, spec: { cpu: { guest: 2 }, memory: { guest: '1Gi' }, annotations: { 'example.com/from-it': 'yes' } } });
  await kube.create(CLUSTER_PREFERENCES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterPreference', metadata: { name: 'ex.cirros' }, spec: { devices: { preferredDiskBus: 'sata', preferredInterfaceModel: 'e1000' }, cpu: { preferredCPUTopology: 'cores' } } });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  config = policy('expand');
  const base = harness(server);
  h = { ...base, deps: { ...base.deps, clusterConfig: async () => config } };
  server.audit.clear();
  server.faults.clear();
});

/** A VM naming the instance type and preference, with no CPU or memory of its own; `adopted`: its metadata already written by this controller. */
function vm(name: string, runStrategy: string, adopted = false): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: NS,
      ...(adopted ? { finalizers: [VM_CONTROLLER_FINALIZER], annotations: { [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' } } : {}),
    },
    spec: {
      runStrategy,
      instancetype: { name: 'ex.small' },
      preference: { name: 'ex.cirros' },
      template: { spec: { domain: { devices: { disks: [{ name: 'root', disk: {} }] } }, volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }] } },
    },
  };
}

/** The template spec the expansion writes for {@link vm}. */
const EXPANDED = {
  architecture: 'amd64',
  domain: {
    cpu: { sockets: 1, cores: 2, threads: 1 },
    memory: { guest: '1Gi' },
    machine: { type: 'q35' },
    resources: {},
    devices: { disks: [{ name: 'root', disk: { bus: 'sata' } }], interfaces: [{ name: 'default', bridge: {}, model: 'e1000' }] },
  },
  networks: [{ name: 'default', pod: {} }],
  volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo', imagePullPolicy: 'Always' } }],
};

async function failure(name: string) {
  const c = (await h.kube.get(VMS, NS, name))?.status?.conditions?.find((x) => x.type === 'Failure');
  return c ? { reason: c.reason, message: c.message } : undefined;
}

/** Pins the revisions under the default policy (a Halted VM: nothing starts), then switches to `next`. */
async function pinnedThen(name: string, next: string): Promise<{ itRev: string; prefRev: string }> {
  config = policy('reference');
  await h.kube.create(VMS, vm(name, 'Halted'));
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  const status = (await h.kube.get(VMS, NS, name))?.status;
  config = policy(next);
  server.audit.clear();
  return { itRev: status?.instancetypeRef?.controllerRevisionRef?.name ?? '', prefRev: status?.preferenceRef?.controllerRevisionRef?.name ?? '' };
}

describe('VM reconcile: instance type reference policies expand / expandAll', () => {
  test('the policy comes from spec.configuration.instancetype.referencePolicy: reference by default, anything else refused', () => {
    assert.equal(clusterConfigFromKubeVirt().instancetypeReferencePolicy, 'reference');
    for (const p of ['reference', 'expand', 'expandAll']) assert.equal(policy(p).instancetypeReferencePolicy, p);
    assert.throws(() => policy('Expand'), (e: unknown) => e instanceof InvalidInputError && e.field === 'spec.configuration.instancetype.referencePolicy');
  });

  test('expand: the spec rewritten with both expanded and the cluster defaults, no matcher, no status ref, no revision; then the VMI starts from it', async () => {
    // arrange
    await h.kube.create(VMS, vm('ex-1', 'Always'));
    // act
    await reconcileUntilSettled(server, h, `${NS}/ex-1`);
    // assert
    const got = await h.kube.get(VMS, NS, 'ex-1');
    assert.deepEqual(objectActions(server), [
      'patch virtualmachines ex-1', // the finalizer
      'patch virtualmachines ex-1', // the expansion (the rest of that pass is skipped)
      'patch virtualmachines/status ex-1',
      `create controllerrevisions revision-start-vm-${got?.metadata?.uid ?? ''}-2`,
      'create virtualmachineinstances ex-1',
      'patch virtualmachines/status ex-1',
    ]);
    assert.equal(got?.spec.instancetype, undefined);
    assert.equal(got?.spec.preference, undefined);
    assert.equal(got?.status?.instancetypeRef, undefined);
    assert.equal(got?.status?.preferenceRef, undefined);
    const { firmware, ...domain } = got!.spec.template.spec!.domain;
    assert.ok(firmware?.uuid, "the firmware UUID virt-api's VM webhook gave at create, kept by the expansion");
    assert.deepEqual({ ...got!.spec.template.spec, domain }, EXPANDED);
    assert.deepEqual(got?.spec.template.metadata, { annotations: { 'example.com/from-it': 'yes', 'kubevirt.io/pci-topology-version': 'v3' } }, "the instance type's annotations go into the template, by the PCI topology version virt-api's VM webhook gave it");
    const revisions = (await h.kube.list(CONTROLLER_REVISIONS, NS)).items.filter((r) => r.metadata?.name?.startsWith('ex-1-'));
    assert.deepEqual(revisions, [], 'nothing pinned');
    const vmi = await h.kube.get(VMIS, NS, 'ex-1');
    assert.deepEqual([vmi?.spec.domain.cpu?.cores, vmi?.spec.domain.memory?.guest, vmi?.spec.domain.devices.disks?.[0]?.disk?.bus], [2, '1Gi', 'sata']);
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-instancetype-name'], undefined, 'the VMI names no instance type: the VM has none');
    assert.equal(await failure('ex-1'), undefined);
  });

  test('expand leaves a VM whose status ref pins a revision as it is (it was admitted under reference)', async () => {
    // arrange
    const { itRev } = await pinnedThen('ex-2', 'expand');
    // act
    await reconcileUntilSettled(server, h, `${NS}/ex-2`);
    // assert
    const got = await h.kube.get(VMS, NS, 'ex-2');
    assert.deepEqual(objectActions(server), [], 'no write');
    assert.deepEqual(got?.spec.instancetype, { name: 'ex.small' });
    assert.equal(got?.status?.instancetypeRef?.controllerRevisionRef?.name, itRev);
    assert.ok(await h.kube.get(CONTROLLER_REVISIONS, NS, itRev));
  });

  test('expandAll expands it anyway: spec, then status without its refs, then both pinned revisions deleted', async () => {
    // arrange
    const { itRev, prefRev } = await pinnedThen('ex-3', 'expandAll');
    // act
    await reconcileUntilSettled(server, h, `${NS}/ex-3`);
    // assert
    const got = await h.kube.get(VMS, NS, 'ex-3');
    assert.deepEqual(objectActions(server).slice(0, 4), ['patch virtualmachines ex-3', 'patch virtualmachines/status ex-3', `delete controllerrevisions ${itRev}`, `delete controllerrevisions ${prefRev}`]);
    assert.equal(got?.spec.instancetype, undefined);
    assert.equal(got?.status?.instancetypeRef, undefined);
    assert.equal(got?.status?.preferenceRef, undefined);
    assert.deepEqual(got?.spec.template.spec?.domain.cpu, EXPANDED.domain.cpu);
    assert.equal(await h.kube.get(CONTROLLER_REVISIONS, NS, itRev), undefined);
    assert.equal(await h.kube.get(CONTROLLER_REVISIONS, NS, prefRev), undefined);
    assert.equal(await failure('ex-3'), undefined);
  });

  test('a template field the instance type also sets: UnsupportedSyncError with the conflict, the VM unchanged, no VMI', async () => {
    // arrange
    const conflicting = vm('ex-4', 'Always');
    conflicting.spec.template.spec!.domain.cpu = { sockets: 4 };
    await h.kube.create(VMS, conflicting);
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/ex-4`, 3).catch((e: Error) => e);
    // assert
    assert.ok(settled instanceof Error, 'retried with backoff: it never settles');
    assert.deepEqual(await failure('ex-4'), {
      reason: 'UnsupportedSyncError',
      message: 'unsupported error: error encountered while expanding into VirtualMachine: VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type',
    });
    const got = await h.kube.get(VMS, NS, 'ex-4');
    assert.deepEqual(got?.spec.instancetype, { name: 'ex.small' });
    assert.deepEqual(got?.spec.template.spec?.domain.cpu, { sockets: 4 });
    assert.equal(await h.kube.get(VMIS, NS, 'ex-4'), undefined);
    assert.equal(objectActions(server).filter((a) => a === 'patch virtualmachines ex-4').length, 1, 'only the finalizer patch');
  });

  test('the VM update failing: UnsupportedSyncError "…when trying to update expanded VirtualMachine: …"; the next pass expands it', async () => {
    // arrange
    await h.kube.create(VMS, vm('ex-5', 'Halted', true));
    server.faults.failNext(500, 1, { verb: 'patch', resource: 'virtualmachines', identity: CONTROLLER });
    // act
    const first = await reconcileVm(`${NS}/ex-5`, h.deps).then(() => undefined, (e: Error) => e);
    const failed = await failure('ex-5');
    await reconcileUntilSettled(server, h, `${NS}/ex-5`);
    // assert
    assert.ok(first instanceof Error);
    assert.equal(failed?.reason, 'UnsupportedSyncError');
    assert.match(failed?.message ?? '', /^unsupported error: error encountered when trying to update expanded VirtualMachine: ./);
    assert.equal((await h.kube.get(VMS, NS, 'ex-5'))?.spec.instancetype, undefined);
    assert.equal(await failure('ex-5'), undefined);
  });

  test('a pinned revision not deleted: FailedCreate "error encountered cleaning controllerRevision …", the VM expanded all the same', async () => {
    // arrange
    const { itRev } = await pinnedThen('ex-6', 'expandAll');
    server.faults.failNext(500, 1, { verb: 'delete', resource: 'controllerrevisions', identity: CONTROLLER });
    // act
    const first = await reconcileVm(`${NS}/ex-6`, h.deps).then(() => undefined, (e: Error) => e);
    // assert
    const failed = await failure('ex-6');
    assert.ok(first instanceof Error);
    assert.equal(failed?.reason, 'FailedCreate');
    assert.ok(failed?.message?.startsWith(`error encountered cleaning controllerRevision ${itRev} after successfully expanding VirtualMachine ex-6: `), failed?.message);
    const got = await h.kube.get(VMS, NS, 'ex-6');
    assert.equal(got?.spec.instancetype, undefined);
    assert.equal(got?.status?.instancetypeRef, undefined);
  });
});
