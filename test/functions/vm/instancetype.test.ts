import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, CONTROLLER_REVISIONS, INSTANCETYPES, PREFERENCES, PVCS, VMIS, VMS } from '../../../shared/api/resources.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { CONTROLLER, harness, NS, objectActions, reconcileUntilSettled, type Harness, startKubevirtApiServer } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startKubevirtApiServer();
  const kube = harness(server).kube;
  // Shared fixtures: a cluster instance type and preference, and namespaced ones.
  await kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'u1.small', labels: { l: 'stripped' } }, spec: { cpu: { guest: 2 }, memory: { guest: '1Gi' } } });
  await kube.create(CLUSTER_PREFERENCES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterPreference', metadata: { name: 'cirros' }, spec: { devices: { preferredDiskBus: 'sata', preferredInterfaceModel: 'e1000' }, cpu: { preferredCPUTopology: 'cores' } } });
  await kube.create(INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'ns-medium', namespace: NS }, spec: { cpu: { guest: 4 }, memory: { guest: '2Gi' }, annotations: { 'example.com/from-it': 'yes' } } });
  await kube.create(PREFERENCES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachinePreference', metadata: { name: 'ns-pref', namespace: NS }, spec: { devices: { preferredDiskBus: 'scsi' } } });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  h = harness(server);
  server.audit.clear();
});

/** A VM with no CPU or memory of its own (the instance type provides them). */
function vm(name: string, spec: Partial<VirtualMachine['spec']>, domain: Partial<VirtualMachineInstanceSpec['domain']> = {}): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      runStrategy: 'Always',
      template: { spec: { domain: { devices: { disks: [{ name: 'root', disk: {} }] }, ...domain }, volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }] } },
      ...spec,
    },
  };
}

function events(): string[] {
  return server.audit
    .query({ identity: CONTROLLER })
    .filter((e) => e.resource === 'events')
    .map((e) => {
      const o = e.object as { reason?: string; message?: string };
      return `${o.reason ?? ''}: ${o.message ?? ''}`;
    });
}

async function failure(name: string) {
  const c = (await h.kube.get(VMS, NS, name))?.status?.conditions?.find((x) => x.type === 'Failure');
  return c ? { reason: c.reason, message: c.message } : undefined;
}

/** A fixed number of passes, thrown (retried) errors collected: a failing VM never "settles". */
async function passes(name: string, n = 3): Promise<string[]> {
  const errors: string[] = [];
  for (let i = 0; i < n; i++) {
    try {
      await reconcileVm(`${NS}/${name}`, h.deps);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  return errors;
}

async function revision(name: string): Promise<V1ControllerRevision | undefined> {
  return h.kube.get(CONTROLLER_REVISIONS, NS, name);
}

describe('VM reconcile: instance types and preferences', () => {
  test('cluster kinds by default: revisions pinned, status refs written, the VMI expanded', async () => {
    // arrange
    await h.kube.create(VMS, vm('it-1', { instancetype: { name: 'u1.small' }, preference: { name: 'cirros' } }));
    const it = await h.kube.get(CLUSTER_INSTANCETYPES, undefined, 'u1.small');
    const pref = await h.kube.get(CLUSTER_PREFERENCES, undefined, 'cirros');
    // act
    await reconcileUntilSettled(server, h, `${NS}/it-1`);
    // assert
    const got = await h.kube.get(VMS, NS, 'it-1');
    const itRev = `it-1-u1.small-v1beta1-${it?.metadata?.uid}-${it?.metadata?.generation}`;
    const prefRev = `it-1-cirros-v1beta1-${pref?.metadata?.uid}-${pref?.metadata?.generation}`;
    assert.deepEqual(objectActions(server), [
      'patch virtualmachines it-1',
      `create controllerrevisions ${itRev}`,
      `create controllerrevisions ${prefRev}`,
      'patch virtualmachines/status it-1',
      `create controllerrevisions revision-start-vm-${got?.metadata?.uid ?? ''}-${got?.metadata?.generation ?? 1}`,
      'create virtualmachineinstances it-1',
      'patch virtualmachines/status it-1',
    ]);
    assert.deepEqual(got?.status?.instancetypeRef, { name: 'u1.small', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: itRev } });
    assert.deepEqual(got?.status?.preferenceRef, { name: 'cirros', kind: 'VirtualMachineClusterPreference', controllerRevisionRef: { name: prefRev } });
    assert.deepEqual(got?.spec.instancetype, { name: 'u1.small' }, 'the controller never writes spec.*.revisionName');
    const cr = await revision(itRev);
    assert.deepEqual(cr?.metadata?.labels, {
      'instancetype.kubevirt.io/object-generation': String(it?.metadata?.generation),
      'instancetype.kubevirt.io/object-kind': 'VirtualMachineClusterInstancetype',
      'instancetype.kubevirt.io/object-name': 'u1.small',
      'instancetype.kubevirt.io/object-uid': it?.metadata?.uid,
      'instancetype.kubevirt.io/object-version': 'v1beta1',
    });
    const owner = cr?.metadata?.ownerReferences?.[0];
    assert.deepEqual([owner?.kind, owner?.uid, owner?.controller, owner?.blockOwnerDeletion], ['VirtualMachine', got?.metadata?.uid, true, true]);
    const data = cr?.data as { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: unknown };
    assert.deepEqual([data.apiVersion, data.kind, data.metadata['name'], data.metadata['labels']], ['instancetype.kubevirt.io/v1beta1', 'VirtualMachineClusterInstancetype', 'u1.small', undefined]);
    assert.deepEqual(data.spec, it?.spec);
    const vmi = await h.kube.get(VMIS, NS, 'it-1');
    // virt-api's VMI webhook adds the rest: maxSockets = sockets × 4 (KubeVirt's default maxHotplugRatio) and the CPU model.
    assert.deepEqual(vmi?.spec.domain.cpu, { sockets: 1, cores: 2, threads: 1, maxSockets: 4, model: 'host-model' }, 'guest 2 vCPUs as cores (preferredCPUTopology: cores)');
    assert.equal(vmi?.spec.domain.memory?.guest, '1Gi');
    assert.deepEqual(vmi?.spec.domain.devices.disks, [{ name: 'root', disk: { bus: 'sata' } }]);
    assert.equal(vmi?.spec.domain.devices.interfaces?.[0]?.model, 'e1000', 'the preference reaches the default pod interface');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-instancetype-name'], 'u1.small');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-preference-name'], 'cirros');
    assert.equal(await failure('it-1'), undefined);
  });

  test('namespaced kinds (singular, plural, any case): namespaced objects and annotations', async () => {
    // arrange
    await h.kube.create(VMS, vm('it-ns', { instancetype: { name: 'ns-medium', kind: 'virtualmachineinstancetypes' }, preference: { name: 'ns-pref', kind: 'VirtualMachinePreference' } }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/it-ns`);
    // assert
    const got = await h.kube.get(VMS, NS, 'it-ns');
    assert.equal(got?.status?.instancetypeRef?.kind, 'VirtualMachineInstancetype');
    const vmi = await h.kube.get(VMIS, NS, 'it-ns');
    assert.deepEqual(vmi?.spec.domain.cpu, { sockets: 4, cores: 1, threads: 1, maxSockets: 16, model: 'host-model' }, "maxSockets: 4 sockets × KubeVirt's default maxHotplugRatio 4 (virt-api's webhook)");
    assert.deepEqual(vmi?.spec.domain.devices.disks, [{ name: 'root', disk: { bus: 'scsi' } }]);
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/instancetype-name'], 'ns-medium');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/preference-name'], 'ns-pref');
    assert.equal(vmi?.metadata?.annotations?.['example.com/from-it'], 'yes', "the instance type's annotations");
  });

  const findFailures: [string, Partial<VirtualMachine['spec']>, { reason: string; message: string }][] = [
    ['a missing instance type', { instancetype: { name: 'nope' } }, { reason: 'FailedFindInstancetype', message: 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nope" not found' }],
    ['a missing namespaced preference', { instancetype: { name: 'u1.small' }, preference: { name: 'nope', kind: 'VirtualMachinePreference' } }, { reason: 'FailedFindPreference', message: 'virtualmachinepreferences.instancetype.kubevirt.io "nope" not found' }],
    ['an unexpected kind', { instancetype: { name: 'u1.small', kind: 'Pod' } }, { reason: 'FailedFindInstancetype', message: 'got unexpected kind in InstancetypeMatcher: Pod' }],
    ['a missing revisionName', { instancetype: { name: 'u1.small', revisionName: 'gone' } }, { reason: 'FailedFindInstancetype', message: 'controllerrevisions.apps "gone" not found' }],
  ];
  findFailures.forEach(([name, spec, want], i) => {
    test(`${name}: Failure ${want.reason}, no event, no VMI`, async () => {
      // arrange
      await h.kube.create(VMS, vm(`find-${i}`, spec));
      // act
      const errors = await passes(`find-${i}`);
      // assert
      assert.deepEqual(await failure(`find-${i}`), want);
      assert.deepEqual(events(), []);
      assert.equal(await h.kube.get(VMIS, NS, `find-${i}`), undefined);
      assert.ok(errors.length === 3 && errors.every((e) => e.includes(want.message)), 'a sync error: retried with backoff');
    });
  });

  test('a template field the instance type also sets: storing fails with the conflict, no revision, no VMI', async () => {
    // arrange
    await h.kube.create(VMS, vm('conflict-1', { instancetype: { name: 'u1.small' } }, { cpu: { cores: 2 } }));
    // act
    await passes('conflict-1');
    // assert
    const message = 'error encountered while storing instancetype.kubevirt.io controllerRevisions: VM field(s) spec.template.spec.domain.cpu.cores conflicts with selected instance type';
    assert.deepEqual(await failure('conflict-1'), { reason: 'FailedCreate', message });
    assert.ok(events().every((e) => e === `FailedCreate: ${message}`) && events().length > 0);
    assert.equal(await h.kube.get(VMIS, NS, 'conflict-1'), undefined);
    assert.ok(!objectActions(server).some((a) => a.startsWith('create')), 'nothing created');
  });

  test('a conflict only the start sees (template changed after pinning): FailedCreate, no VMI', async () => {
    // arrange: pinned while Halted, then the template gains CPU sockets
    await h.kube.create(VMS, vm('conflict-2', { runStrategy: 'Halted', instancetype: { name: 'u1.small' } }));
    await reconcileUntilSettled(server, h, `${NS}/conflict-2`);
    await h.kube.patch(VMS, NS, 'conflict-2', { type: 'merge', body: { spec: { runStrategy: 'Always', template: { spec: { domain: { cpu: { sockets: 2 } } } } } } });
    server.audit.clear();
    // act
    await passes('conflict-2');
    // assert
    const detail = 'Failed to apply instancetype: VMI conflicts with instancetype spec in fields: [spec.domain.cpu.sockets]';
    assert.deepEqual(await failure('conflict-2'), { reason: 'FailedCreate', message: `Failure while starting VMI: ${detail}` });
    assert.ok(events().includes(`FailedCreate: Error creating virtual machine instance: ${detail}`));
    assert.equal(await h.kube.get(VMIS, NS, 'conflict-2'), undefined);
  });

  test('pinned: a changed instance type does not reach a restart; a new VM pins the new generation', async () => {
    // arrange
    await h.kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'grows' }, spec: { cpu: { guest: 1 }, memory: { guest: '512Mi' } } });
    await h.kube.create(VMS, vm('pin-1', { instancetype: { name: 'grows' } }));
    await reconcileUntilSettled(server, h, `${NS}/pin-1`);
    const pinned = (await h.kube.get(VMS, NS, 'pin-1'))?.status?.instancetypeRef?.controllerRevisionRef?.name;
    await h.kube.patch(CLUSTER_INSTANCETYPES, undefined, 'grows', { type: 'merge', body: { spec: { cpu: { guest: 3 } } } });
    // act: restart (delete the VMI; Always recreates it) and a second VM
    await h.kube.delete(VMIS, NS, 'pin-1');
    await reconcileUntilSettled(server, h, `${NS}/pin-1`);
    await h.kube.create(VMS, vm('pin-2', { instancetype: { name: 'grows' } }));
    await reconcileUntilSettled(server, h, `${NS}/pin-2`);
    // assert
    const first = await h.kube.get(VMIS, NS, 'pin-1');
    assert.ok(pinned?.endsWith('-1'), pinned);
    assert.equal((await h.kube.get(VMS, NS, 'pin-1'))?.status?.instancetypeRef?.controllerRevisionRef?.name, pinned);
    assert.deepEqual(first?.spec.domain.cpu, { sockets: 1, cores: 1, threads: 1, maxSockets: 4, model: 'host-model' }, "still the pinned 1 vCPU (maxSockets and model: virt-api's webhook, KubeVirt's default maxHotplugRatio 4)");
    const second = await h.kube.get(VMS, NS, 'pin-2');
    assert.ok(second?.status?.instancetypeRef?.controllerRevisionRef?.name?.endsWith('-2'), 'generation 2');
    assert.equal((await h.kube.get(VMIS, NS, 'pin-2'))?.spec.domain.cpu?.sockets, 3);
  });

  test('revisionName: that revision is used and referenced, none is created', async () => {
    // arrange: the revision pinned by pin-1 serves another VM
    await h.kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'rev-src' }, spec: { cpu: { guest: 2 }, memory: { guest: '256Mi' } } });
    await h.kube.create(VMS, vm('rev-a', { runStrategy: 'Halted', instancetype: { name: 'rev-src' } }));
    await reconcileUntilSettled(server, h, `${NS}/rev-a`);
    const name = (await h.kube.get(VMS, NS, 'rev-a'))?.status?.instancetypeRef?.controllerRevisionRef?.name ?? '';
    await h.kube.patch(CLUSTER_INSTANCETYPES, undefined, 'rev-src', { type: 'merge', body: { spec: { cpu: { guest: 6 } } } });
    await h.kube.create(VMS, vm('rev-b', { instancetype: { name: 'rev-src', revisionName: name } }));
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/rev-b`);
    // assert
    assert.deepEqual((await h.kube.get(VMS, NS, 'rev-b'))?.status?.instancetypeRef?.controllerRevisionRef, { name });
    assert.ok(!objectActions(server).some((a) => a.startsWith('create controllerrevisions') && !a.startsWith('create controllerrevisions revision-start-vm-')));
    assert.equal((await h.kube.get(VMIS, NS, 'rev-b'))?.spec.domain.cpu?.sockets, 2, 'the revision, not the live object');
  });

  test('a renamed matcher unpins: a new revision for the new object', async () => {
    // arrange
    await h.kube.create(VMS, vm('rename-1', { runStrategy: 'Halted', instancetype: { name: 'u1.small' } }));
    await reconcileUntilSettled(server, h, `${NS}/rename-1`);
    // act
    await h.kube.patch(VMS, NS, 'rename-1', { type: 'merge', body: { spec: { instancetype: { name: 'ns-medium', kind: 'VirtualMachineInstancetype' } } } });
    await reconcileUntilSettled(server, h, `${NS}/rename-1`);
    // assert
    const ref = (await h.kube.get(VMS, NS, 'rename-1'))?.status?.instancetypeRef;
    assert.equal(ref?.name, 'ns-medium');
    assert.equal(ref?.kind, 'VirtualMachineInstancetype');
    assert.match(ref?.controllerRevisionRef?.name ?? '', /^rename-1-ns-medium-v1beta1-/);
  });

  test('an existing revision of the same name: reused when its spec is equal, an error when not', async () => {
    // arrange: pinned, then the status ref is lost (the revision stays)
    await h.kube.create(VMS, vm('exists-1', { runStrategy: 'Halted', instancetype: { name: 'u1.small' } }));
    await reconcileUntilSettled(server, h, `${NS}/exists-1`);
    const name = (await h.kube.get(VMS, NS, 'exists-1'))?.status?.instancetypeRef?.controllerRevisionRef?.name ?? '';
    const dropRef = () => h.kube.patch(VMS, NS, 'exists-1', { type: 'json', ops: [{ op: 'remove', path: '/status/instancetypeRef' }] }, { subresource: 'status' });
    await dropRef();
    // act 1: equal → reused
    await reconcileUntilSettled(server, h, `${NS}/exists-1`);
    const reused = (await h.kube.get(VMS, NS, 'exists-1'))?.status?.instancetypeRef?.controllerRevisionRef?.name;
    // act 2: different data → error
    const cr = await revision(name);
    await h.kube.patch(CONTROLLER_REVISIONS, NS, name, { type: 'merge', body: { data: { ...(cr?.data as object), spec: { cpu: { guest: 9 }, memory: { guest: '1Gi' } } } } });
    await dropRef();
    server.audit.clear();
    await passes('exists-1');
    // assert
    assert.equal(reused, name);
    const message = `error encountered while storing instancetype.kubevirt.io controllerRevisions: found existing ControllerRevision with unexpected data: ${name}`;
    assert.deepEqual(await failure('exists-1'), { reason: 'FailedCreate', message });
    assert.ok(events().includes(`FailedCreate: ${message}`));
  });

  test('upgrade: a v1alpha2 revision is rewritten as v1beta1, the ref moved (test + replace), the old one deleted', async () => {
    // arrange: a VM pinned by an older KubeVirt
    const it = await h.kube.get(CLUSTER_INSTANCETYPES, undefined, 'u1.small');
    await h.kube.create(VMS, vm('upgrade-1', { runStrategy: 'Halted', instancetype: { name: 'u1.small' } }));
    const owner = await h.kube.get(VMS, NS, 'upgrade-1');
    await h.kube.create(CONTROLLER_REVISIONS, {
      metadata: { name: 'upgrade-1-old', namespace: NS, labels: { 'instancetype.kubevirt.io/object-name': 'u1.small', 'instancetype.kubevirt.io/object-version': 'v1alpha2' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'upgrade-1', uid: owner?.metadata?.uid ?? '', controller: true }] },
      data: { apiVersion: 'instancetype.kubevirt.io/v1alpha2', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'u1.small', uid: it?.metadata?.uid, generation: it?.metadata?.generation }, spec: { cpu: { guest: 2 }, memory: { guest: '1Gi' } } },
      revision: 0,
    });
    await h.kube.patch(VMS, NS, 'upgrade-1', { type: 'merge', body: { status: { instancetypeRef: { name: 'u1.small', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: 'upgrade-1-old' } } } } }, { subresource: 'status' });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/upgrade-1`);
    // assert
    const want = `upgrade-1-u1.small-v1beta1-${it?.metadata?.uid}-${it?.metadata?.generation}`;
    assert.deepEqual(objectActions(server).slice(0, 4), ['patch virtualmachines upgrade-1', `create controllerrevisions ${want}`, 'patch virtualmachines/status upgrade-1', 'delete controllerrevisions upgrade-1-old']);
    assert.equal((await h.kube.get(VMS, NS, 'upgrade-1'))?.status?.instancetypeRef?.controllerRevisionRef?.name, want);
    assert.equal(await revision('upgrade-1-old'), undefined);
    assert.equal((await revision(want))?.metadata?.labels?.['instancetype.kubevirt.io/object-version'], 'v1beta1');
  });

  describe('inferFromVolume (the webhook part)', () => {
    const pvc = (name: string, labels: Record<string, string>) => ({
      metadata: { name, namespace: NS, labels },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const withPvc = (name: string, claim: string, spec: Partial<VirtualMachine['spec']>, domain: Partial<VirtualMachineInstanceSpec['domain']> = {}): VirtualMachine => {
      const v = vm(name, spec, domain);
      v.spec.template.spec!.volumes = [{ name: 'root', persistentVolumeClaim: { claimName: claim } }];
      return v;
    };

    test('the labels of the PVC name the instance type and preference: the matchers are rewritten, then pinned', async () => {
      // arrange
      await h.kube.create(PVCS, pvc('labelled', { 'instancetype.kubevirt.io/default-instancetype': 'ns-medium', 'instancetype.kubevirt.io/default-instancetype-kind': 'VirtualMachineInstancetype', 'instancetype.kubevirt.io/default-preference': 'cirros' }));
      await h.kube.create(VMS, withPvc('infer-1', 'labelled', { runStrategy: 'Halted', instancetype: { inferFromVolume: 'root' }, preference: { inferFromVolume: 'root' } }));
      // act
      await reconcileUntilSettled(server, h, `${NS}/infer-1`);
      // assert
      const got = await h.kube.get(VMS, NS, 'infer-1');
      assert.deepEqual(got?.spec.instancetype, { name: 'ns-medium', kind: 'VirtualMachineInstancetype' });
      assert.deepEqual(got?.spec.preference, { name: 'cirros', kind: 'VirtualMachineClusterPreference' });
      assert.match(got?.status?.instancetypeRef?.controllerRevisionRef?.name ?? '', /^infer-1-ns-medium-v1beta1-/);
      assert.match(got?.status?.preferenceRef?.controllerRevisionRef?.name ?? '', /^infer-1-cirros-v1beta1-/);
    });

    const inferCases: [string, Partial<VirtualMachine['spec']>, (v: VirtualMachine | undefined) => unknown, unknown][] = [
      ['Reject (default) with a missing label: FailedFindInstancetype', { instancetype: { inferFromVolume: 'root' } },
        (v) => v?.status?.conditions?.find((c) => c.type === 'Failure')?.message, 'unable to find required instancetype.kubevirt.io/default-instancetype label on the volume'],
      ['Ignore with a missing label: the matcher is dropped', { instancetype: { inferFromVolume: 'root', inferFromVolumeFailurePolicy: 'IgnoreInferFromVolumeFailure' } },
        (v) => [v?.spec.instancetype, v?.status?.conditions?.find((c) => c.type === 'Failure')], [undefined, undefined]],
      ['an unknown volume is never ignorable', { instancetype: { inferFromVolume: 'other', inferFromVolumeFailurePolicy: 'IgnoreInferFromVolumeFailure' } },
        (v) => v?.status?.conditions?.find((c) => c.type === 'Failure')?.message, 'unable to find volume other to infer defaults'],
    ];
    inferCases.forEach(([name, spec, pick, want], i) => {
      test(name, async () => {
        // arrange
        await h.kube.create(PVCS, pvc(`unlabelled-${i}`, {}));
        await h.kube.create(VMS, withPvc(`infer-x${i}`, `unlabelled-${i}`, { runStrategy: 'Halted', ...spec }));
        // act
        await passes(`infer-x${i}`);
        // assert
        assert.deepEqual(pick(await h.kube.get(VMS, NS, `infer-x${i}`)), want);
      });
    });

    test('Ignore with a successful inference drops the template memory', async () => {
      // arrange
      await h.kube.create(PVCS, pvc('labelled-2', { 'instancetype.kubevirt.io/default-instancetype': 'u1.small' }));
      await h.kube.create(VMS, withPvc('infer-mem', 'labelled-2', { runStrategy: 'Halted', instancetype: { inferFromVolume: 'root', inferFromVolumeFailurePolicy: 'IgnoreInferFromVolumeFailure' } }, { memory: { guest: '64Mi' } }));
      // act
      await reconcileUntilSettled(server, h, `${NS}/infer-mem`);
      // assert
      const got = await h.kube.get(VMS, NS, 'infer-mem');
      assert.deepEqual(got?.spec.instancetype, { name: 'u1.small', kind: 'VirtualMachineClusterInstancetype' });
      assert.equal(got?.spec.template.spec?.domain.memory, undefined);
      assert.ok(got?.status?.instancetypeRef?.controllerRevisionRef?.name);
    });
  });
});
