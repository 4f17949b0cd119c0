/**
 * The VM reconcile's live updates against the sandbox API server (reference-vm-vmi-depth §5):
 * the hotplug defaults on the VMI it starts, sockets raised on a running VMI patched into it,
 * RestartRequired (no reason, first message kept, cleared by a restart), the handlers held back
 * while a restart is pending, the vm-generation annotation's catch-up, and Stage; an instance
 * type switched by its matcher, judged with the start revision's pinned revisions (§1.5, §1.7).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { CLUSTER_INSTANCETYPES, CONTROLLER_REVISIONS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { ClusterConfig } from '../../../shared/config/cluster-config.ts';
import { clusterKubeVirt, harness, NS, objectActions, reconcileUntilSettled, setVmiStatus, startKubevirtApiServer, vmManifest, type Harness } from './support.ts';

let server: ApiServer;
let h: Harness;
let config: ClusterConfig;

before(async () => {
  server = await startKubevirtApiServer();
  const kube = harness(server).kube;
  const it = (name: string, spec: { cpu: { guest: number; dedicatedCPUPlacement?: boolean }; memory: { guest: string } }) => kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name }, spec });
  await it('lu.small', { cpu: { guest: 1 }, memory: { guest: '1Gi' } });
  await it('lu.large', { cpu: { guest: 2 }, memory: { guest: '2Gi' } });
  await it('lu.dedicated', { cpu: { guest: 1, dedicatedCPUPlacement: true }, memory: { guest: '1Gi' } });
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  const base = harness(server);
  config = await clusterKubeVirt(base.kube, { configuration: { liveUpdateConfiguration: { maxCpuSockets: 4 } } });
  h = { ...base, deps: { ...base.deps, clusterConfig: async () => config } };
  server.audit.clear();
});

function liveVm(name: string): VirtualMachine {
  const vm = vmManifest(name, { runStrategy: 'Always' });
  vm.spec.template.spec!.domain.cpu = { sockets: 1, cores: 1, threads: 1 };
  vm.spec.template.spec!.domain.memory = { guest: '2Gi' };
  vm.spec.template.spec!.domain.resources = { requests: { cpu: '100m', memory: '2Gi' } };
  return vm;
}

/** Plays the VMI controller and virt-handler: the VMI Running and migratable. */
async function run(name: string): Promise<VirtualMachineInstance> {
  // A Running transition: a VMI that ends after it is no start failure (no crash-loop backoff).
  const status = { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2026-03-01T12:00:00Z' }], conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }] };
  return h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status } });
}

async function started(name: string): Promise<VirtualMachineInstance> {
  await h.kube.create(VMS, liveVm(name));
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  const vmi = await run(name);
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  return vmi;
}

const patchTemplate = (name: string, ops: { op: 'replace' | 'add' | 'remove'; path: string; value?: unknown }[]) =>
  h.kube.patch(VMS, NS, name, { type: 'json', ops: ops.map((o) => ({ ...o, path: `/spec/template/spec${o.path}` })) });
const restartCondition = async (name: string) => (await h.kube.get(VMS, NS, name))?.status?.conditions?.find((c) => c.type === 'RestartRequired');

describe('VM live updates against the sandbox API server', () => {
  test('the started VMI carries the hotplug defaults: maxSockets, maxGuest, status.memory, currentCPUTopology', async () => {
    // arrange + act
    const vmi = await started('lu-defaults');
    // assert
    assert.equal(vmi.spec.domain.cpu?.maxSockets, 4, 'maxCpuSockets');
    assert.equal(vmi.spec.domain.memory?.maxGuest, '8Gi', 'guest × 4 (the default ratio with liveUpdateConfiguration)');
    assert.deepEqual(vmi.status?.memory, { guestAtBoot: '2Gi', guestCurrent: '2Gi', guestRequested: '2Gi' });
    assert.deepEqual(vmi.status?.currentCPUTopology, { sockets: 1, cores: 1, threads: 1 });
  });

  test('sockets raised on a running VM: the VMI is patched (sockets, cpu request + 100m per vCPU), no RestartRequired; the generation annotation stays', async () => {
    // arrange
    await started('lu-cpu');
    server.audit.clear();
    // act
    await patchTemplate('lu-cpu', [{ op: 'replace', path: '/domain/cpu/sockets', value: 3 }]);
    const settled = await reconcileUntilSettled(server, h, `${NS}/lu-cpu`);
    // assert
    const vmi = await h.kube.get(VMIS, NS, 'lu-cpu');
    assert.equal(vmi?.spec.domain.cpu?.sockets, 3);
    assert.equal(vmi?.spec.domain.resources?.requests?.['cpu'], '300m');
    assert.equal(await restartCondition('lu-cpu'), undefined);
    // Started at generation 1 (virt-api's VM webhook gave the UUID at create); the sockets made 2.
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/vm-generation'], '1', 'the template differs from the start revision: not moved');
    assert.ok(objectActions(server).includes('patch virtualmachineinstances lu-cpu'), objectActions(server).join('\n'));
    assert.deepEqual(settled.errors, []);
  });

  test('a CPU hotplug already in progress is a HotPlugCPUError failure, retried', async () => {
    // arrange
    await started('lu-busy');
    await h.kube.patch(VMIS, NS, 'lu-busy', { type: 'merge', body: { status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'True' }, { type: 'HotVCPUChange', status: 'True' }] } } });
    await patchTemplate('lu-busy', [{ op: 'replace', path: '/domain/cpu/sockets', value: 2 }]);
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/lu-busy`, 3).catch((e: Error) => e);
    // assert
    assert.ok(settled instanceof Error, 'a requeued sync error never settles');
    const failure = (await h.kube.get(VMS, NS, 'lu-busy'))?.status?.conditions?.find((c) => c.type === 'Failure');
    assert.equal(failure?.reason, 'HotPlugCPUError');
    assert.equal(failure?.message, 'Error encountered while handling CPU change request: another CPU hotplug is in progress');
    assert.equal((await h.kube.get(VMIS, NS, 'lu-busy'))?.spec.domain.cpu?.sockets, 1);
  });

  test('a non-live-updatable change: RestartRequired, no reason, the first message kept; the handlers wait; a restart clears it', async () => {
    // arrange
    await started('lu-restart');
    // act: sockets above maxSockets (the CPU handler's message), then cores (syncRestartRequired's)
    await patchTemplate('lu-restart', [{ op: 'replace', path: '/domain/cpu/sockets', value: 5 }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-restart`);
    const first = await restartCondition('lu-restart');
    await patchTemplate('lu-restart', [{ op: 'replace', path: '/domain/cpu/cores', value: 2 }, { op: 'replace', path: '/domain/cpu/sockets', value: 2 }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-restart`);
    const second = await restartCondition('lu-restart');
    const vmiBefore = await h.kube.get(VMIS, NS, 'lu-restart');
    // restart: the VMI goes (as virtctl restart would ask), Always starts a new one
    await h.kube.delete(VMIS, NS, 'lu-restart');
    await setVmiStatus(h, 'lu-restart', { phase: 'Succeeded' });
    await reconcileUntilSettled(server, h, `${NS}/lu-restart`);
    const after = await restartCondition('lu-restart');
    const vmiAfter = await h.kube.get(VMIS, NS, 'lu-restart');
    // assert
    assert.equal(first?.status, 'True');
    assert.equal(first?.reason ?? '', '', 'no reason');
    assert.equal(first?.message, "CPU sockets updated in template spec to a value higher than what's available");
    assert.equal(second?.message, first?.message, 'the first message is kept while it stays True');
    assert.equal(vmiBefore?.spec.domain.cpu?.sockets, 1, 'no hotplug while a restart is pending');
    assert.equal(after, undefined, 'the start cleared it');
    assert.deepEqual(vmiAfter?.spec.domain.cpu, { sockets: 2, cores: 2, threads: 1, maxSockets: 4, model: 'host-model' }, "the new topology, with the webhook's maxima and CPU model");
  });

  test('a change outside the template (the run strategy) moves the vm-generation annotation; a change back clears RestartRequired', async () => {
    // arrange
    await started('lu-gen');
    // act
    await h.kube.patch(VMS, NS, 'lu-gen', { type: 'merge', body: { spec: { runStrategy: 'RerunOnFailure' } } });
    await reconcileUntilSettled(server, h, `${NS}/lu-gen`);
    const annotation = (await h.kube.get(VMIS, NS, 'lu-gen'))?.metadata?.annotations?.['kubevirt.io/vm-generation'];
    await patchTemplate('lu-gen', [{ op: 'add', path: '/domain/cpu/model', value: 'host-passthrough' }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-gen`);
    const set = await restartCondition('lu-gen');
    await patchTemplate('lu-gen', [{ op: 'remove', path: '/domain/cpu/model' }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-gen`);
    const cleared = await restartCondition('lu-gen');
    const vm = await h.kube.get(VMS, NS, 'lu-gen');
    // assert
    // Started at generation 1 (no firmware UUID write: virt-api's VM webhook gave it), the run strategy makes 2.
    assert.equal(annotation, '2');
    assert.equal(set?.message, 'a non-live-updatable field was changed in the template spec');
    assert.equal(cleared, undefined);
    assert.equal(vm?.status?.observedGeneration, 4, 'the template equals the start revision again');
  });

  test('halted by its run strategy: the stopping VMI is given the new generation before it is deleted, and the VM reports it observed (KubeVirt bumps before the run-strategy step)', async () => {
    // arrange
    await started('lu-halt');
    // act
    await h.kube.patch(VMS, NS, 'lu-halt', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    await reconcileUntilSettled(server, h, `${NS}/lu-halt`);
    const vmi = await h.kube.get(VMIS, NS, 'lu-halt');
    const vm = await h.kube.get(VMS, NS, 'lu-halt');
    // assert
    assert.ok(vmi?.metadata?.deletionTimestamp, 'the VMI is being stopped');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/vm-generation'], '2', 'bumped in the same pass, before the stop');
    assert.equal(vm?.status?.observedGeneration, 2);
    assert.equal(vm?.status?.desiredGeneration, 2);
  });

  test('Stage: sockets raised need a restart, the VMI is left alone', async () => {
    // arrange
    config = await clusterKubeVirt(h.kube, { configuration: { vmRolloutStrategy: 'Stage' } });
    await started('lu-stage');
    // act
    await patchTemplate('lu-stage', [{ op: 'replace', path: '/domain/cpu/sockets', value: 2 }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-stage`);
    // assert
    assert.equal((await restartCondition('lu-stage'))?.message, 'a non-live-updatable field was changed in the template spec');
    const vmi = await h.kube.get(VMIS, NS, 'lu-stage');
    assert.equal(vmi?.spec.domain.cpu?.sockets, 1);
    assert.equal(vmi?.spec.domain.cpu?.maxSockets, undefined, 'no hotplug maxima under Stage');
  });

  test('memory raised and tolerations added on a running VM: both patched into the VMI', async () => {
    // arrange
    await started('lu-mem');
    // act
    await patchTemplate('lu-mem', [{ op: 'replace', path: '/domain/memory/guest', value: '4Gi' }, { op: 'add', path: '/tolerations', value: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] }]);
    await reconcileUntilSettled(server, h, `${NS}/lu-mem`);
    // assert
    const vmi = await h.kube.get(VMIS, NS, 'lu-mem');
    assert.equal(vmi?.spec.domain.memory?.guest, '4Gi');
    assert.equal(vmi?.spec.domain.resources?.requests?.['memory'], '4Gi');
    assert.deepEqual(vmi?.spec.tolerations, [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }]);
    assert.equal(await restartCondition('lu-mem'), undefined);
  });

  describe('an instance type switched by its matcher on a running VM (§1.5, §1.7)', () => {
    /** A VM whose CPU and memory come from the cluster instance type `lu.small`, started and Running. */
    async function startedWithInstancetype(name: string): Promise<VirtualMachineInstance> {
      const vm = vmManifest(name, { runStrategy: 'Always' });
      vm.spec.instancetype = { name: 'lu.small' };
      delete vm.spec.template.spec!.domain.resources;
      await h.kube.create(VMS, vm);
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      const vmi = await run(name);
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      return vmi;
    }
    const switchTo = (name: string, instancetype: string) => h.kube.patch(VMS, NS, name, { type: 'json', ops: [{ op: 'replace', path: '/spec/instancetype/name', value: instancetype }] });

    test('the start revision stores the spec with revisionName filled from the status ref', async () => {
      // arrange + act
      const vmi = await startedWithInstancetype('lu-it-pin');
      // assert
      const vm = await h.kube.get(VMS, NS, 'lu-it-pin');
      const pinned = vm?.status?.instancetypeRef?.controllerRevisionRef?.name;
      assert.ok(pinned, 'the status ref names a revision');
      const start = await h.kube.get(CONTROLLER_REVISIONS, NS, vmi.status?.virtualMachineRevisionName ?? '');
      assert.deepEqual((start?.data as { spec: VirtualMachine['spec'] }).spec.instancetype, { name: 'lu.small', revisionName: pinned });
      assert.equal(vm?.spec.instancetype?.revisionName, undefined, 'the VM spec itself is not written');
    });

    test('to one with dedicatedCPUPlacement: RestartRequired, the VMI untouched', async () => {
      // arrange
      await startedWithInstancetype('lu-it-dedicated');
      // act
      await switchTo('lu-it-dedicated', 'lu.dedicated');
      const settled = await reconcileUntilSettled(server, h, `${NS}/lu-it-dedicated`);
      const again = await reconcileUntilSettled(server, h, `${NS}/lu-it-dedicated`);
      // assert
      const condition = await restartCondition('lu-it-dedicated');
      assert.equal(condition?.status, 'True');
      assert.equal(condition?.message, 'a non-live-updatable field was changed in the template spec');
      assert.equal((await h.kube.get(VMIS, NS, 'lu-it-dedicated'))?.spec.domain.cpu?.dedicatedCpuPlacement, undefined);
      assert.deepEqual([...settled.errors, ...again.errors], []);
      assert.equal((await restartCondition('lu-it-dedicated'))?.status, 'True', 'kept on later passes (the vm-generation annotation does not hide it)');
    });

    test('to one differing only in cpu.guest and memory.guest: live-updatable, no RestartRequired, sockets hotplugged', async () => {
      // arrange
      await startedWithInstancetype('lu-it-large');
      // act
      await switchTo('lu-it-large', 'lu.large');
      const settled = await reconcileUntilSettled(server, h, `${NS}/lu-it-large`);
      // assert
      assert.equal(await restartCondition('lu-it-large'), undefined);
      const vmi = await h.kube.get(VMIS, NS, 'lu-it-large');
      assert.equal(vmi?.spec.domain.cpu?.sockets, 2, 'the CPU handler patched the new guest count');
      assert.deepEqual(settled.errors, []);
    });

    test('the pinned revision does not decode: no RestartRequired decision that pass', async () => {
      // arrange
      const vmi = await startedWithInstancetype('lu-it-gone');
      const start = await h.kube.get(CONTROLLER_REVISIONS, NS, vmi.status?.virtualMachineRevisionName ?? '');
      const pinned = (start?.data as { spec: VirtualMachine['spec'] }).spec.instancetype?.revisionName ?? '';
      // Re-created with data that does not decode (the labels kept, so find still tells it is not the new object's).
      const cr = await h.kube.get(CONTROLLER_REVISIONS, NS, pinned);
      await h.kube.delete(CONTROLLER_REVISIONS, NS, pinned);
      await h.kube.create(CONTROLLER_REVISIONS, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: pinned, namespace: NS, labels: cr?.metadata?.labels }, data: { apiVersion: 'example.com/v1', kind: 'Foo', spec: {} }, revision: 0 });
      // act
      await switchTo('lu-it-gone', 'lu.dedicated');
      const settled = await reconcileUntilSettled(server, h, `${NS}/lu-it-gone`);
      // assert
      assert.equal(await restartCondition('lu-it-gone'), undefined, 'the start spec cannot be expanded');
      assert.deepEqual(settled.errors, []);
    });
  });
});
