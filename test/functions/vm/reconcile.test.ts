import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { LATEST_OBSERVED_API_VERSION_ANNOTATION, STORAGE_OBSERVED_API_VERSION_ANNOTATION, VM_CONTROLLER_FINALIZER, VMI_FINALIZER } from '../../../shared/api/well-known.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { actions, CONTROLLER, harness, NS, objectActions, reconcileUntilSettled, setVmiStatus as playVmiStatus, startKubevirtApiServer, vmManifest, type Harness } from './support.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, VMIS, VMS } from '../../../shared/api/resources.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startKubevirtApiServer();
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  // Every test gets a fresh state store and clock; its objects have unique names.
  h = harness(server);
  server.audit.clear();
  server.counters.reset();
});

/** Plays virt-handler and the VMI controller (support.ts): the VMI's status, a final one releasing virt-api's finalizer. */
async function setVmiStatus(name: string, status: NonNullable<VirtualMachineInstance['status']>): Promise<void> {
  await playVmiStatus(h, name, status);
}

const RAN = [{ phase: 'Running', phaseTransitionTimestamp: '2026-03-01T12:00:00Z' }];
const READY = [{ type: 'Ready', status: 'True', reason: '', message: '' }];

/** The audit line of the start revision `name`'s VMI is created from (`revision-start-vm-<uid>-<generation>`). */
async function startRevisionCreate(name: string): Promise<string> {
  const vm = await h.kube.get(VMS, NS, name);
  return `create controllerrevisions revision-start-vm-${vm?.metadata?.uid ?? ''}-${vm?.metadata?.generation ?? 1}`;
}

async function vmStatus(name: string) {
  return (await h.kube.get(VMS, NS, name))?.status;
}

describe('VM reconcile against the sandbox API server', () => {
  test('Always: finalizer, then the VMI from the template, then status; the next pass writes nothing', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('always-1', { runStrategy: 'Always' }));
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/always-1`);
    // assert
    assert.deepEqual(actions(server), [
      'patch virtualmachines always-1', // the finalizer; virt-api's VM webhook gave the template its firmware UUID
      await startRevisionCreate('always-1'),
      'create virtualmachineinstances always-1',
      'event SuccessfulCreate',
      'patch virtualmachines/status always-1',
    ]);
    assert.equal(settled.last !== 'error' && settled.last.kind, 'done');
    const vmi = await h.kube.get(VMIS, NS, 'always-1');
    const vm = await h.kube.get(VMS, NS, 'always-1');
    assert.ok(vmi, 'the VMI must exist');
    assert.equal(vmi.metadata?.labels?.app, 'demo', 'labels come from the template');
    assert.equal(vmi.metadata?.annotations?.['example.com/note'], 'from-template');
    assert.deepEqual(vmi.metadata?.finalizers, [VM_CONTROLLER_FINALIZER, VMI_FINALIZER], "the controller's, then the one virt-api's VMI webhook appends");
    const ref = vmi.metadata?.ownerReferences?.[0];
    assert.deepEqual([ref?.kind, ref?.uid, ref?.controller], ['VirtualMachine', vm?.metadata?.uid, true]);
    assert.ok(vm?.metadata?.finalizers?.includes(VM_CONTROLLER_FINALIZER), 'the VM carries its finalizer');
    // Generation 1: the VM webhook's UUID is there from the create, so the controller writes no spec.
    const revisionName = `revision-start-vm-${vm?.metadata?.uid ?? ''}-1`;
    assert.equal(vm?.metadata?.generation, 1);
    assert.match(vm?.spec.template.spec?.domain.firmware?.uuid ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/, "the template carries the webhook's random UUID");
    assert.equal(vmi.spec.domain.firmware?.uuid, vm?.spec.template.spec?.domain.firmware?.uuid, 'and so does the VMI');
    assert.equal(vmi.status?.virtualMachineRevisionName, revisionName, 'the VMI names the revision it was started from');
    const revision = await h.kube.get(CONTROLLER_REVISIONS, NS, revisionName);
    assert.deepEqual((revision?.data as { spec?: unknown } | undefined)?.spec, vm?.spec, 'the revision holds the VM spec');
    assert.deepEqual(revision?.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['VirtualMachine', vm?.metadata?.uid, true]]);
    assert.equal(vm?.status?.printableStatus, 'Starting');
    assert.equal(vm?.status?.created, true);
  });

  test('Halted: a running VMI is deleted, released once final, then Stopped', async () => {
    // arrange: start it under Always, play it to Running, then halt
    await h.kube.create(VMS, vmManifest('halt-1', { runStrategy: 'Always' }));
    await reconcileUntilSettled(server, h, `${NS}/halt-1`);
    await setVmiStatus('halt-1', { phase: 'Running', phaseTransitionTimestamps: RAN, conditions: READY });
    await reconcileUntilSettled(server, h, `${NS}/halt-1`);
    assert.equal((await vmStatus('halt-1'))?.printableStatus, 'Running');
    assert.equal((await vmStatus('halt-1'))?.ready, true);
    await h.kube.patch(VMS, NS, 'halt-1', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/halt-1`);
    const stopping = (await vmStatus('halt-1'))?.printableStatus;
    await setVmiStatus('halt-1', { phase: 'Succeeded' }); // virt-handler: the guest shut down
    await reconcileUntilSettled(server, h, `${NS}/halt-1`);
    // assert
    assert.deepEqual(objectActions(server), [
      'patch virtualmachineinstances halt-1', // kubevirt.io/vm-generation follows the run strategy's change (generation-annotation.ts)
      'delete virtualmachineinstances halt-1',
      'patch virtualmachines/status halt-1', // Stopping
      'patch virtualmachines/status halt-1', // the VMI is final: Stopped
      'patch virtualmachineinstances halt-1', // the VM's finalizer released: the VMI can go
      'patch virtualmachines/status halt-1', // created and ready dropped (KubeVirt omits false)
    ]);
    assert.equal(stopping, 'Stopping');
    assert.equal(await h.kube.get(VMIS, NS, 'halt-1'), undefined, 'the VMI is gone once released');
    const status = await vmStatus('halt-1');
    assert.equal(status?.printableStatus, 'Stopped');
    assert.equal(status?.created, undefined, "KubeVirt's omitempty: no created: false");
    assert.equal(status?.ready, undefined, "KubeVirt's omitempty: no ready: false");
  });

  test('Manual: nothing until a Start request; the request is trimmed once the VMI lives', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('manual-1', { runStrategy: 'Manual' }));
    await reconcileUntilSettled(server, h, `${NS}/manual-1`);
    const idle = objectActions(server);
    // act
    await h.kube.patch(VMS, NS, 'manual-1', { type: 'merge', body: { status: { stateChangeRequests: [{ action: 'Start' }] } } }, { subresource: 'status' });
    server.audit.clear();
    await reconcileUntilSettled(server, h, `${NS}/manual-1`);
    // assert
    assert.deepEqual(idle, ['patch virtualmachines manual-1', 'patch virtualmachines/status manual-1'], 'no VMI without a request (the finalizer, the status)');
    assert.deepEqual(objectActions(server), [await startRevisionCreate('manual-1'), 'create virtualmachineinstances manual-1', 'patch virtualmachines/status manual-1']);
    assert.equal((await vmStatus('manual-1'))?.stateChangeRequests, undefined, 'the Start request is done');
  });

  test('a pass that read the VM before its first status cannot wipe a Start request written since (the add of /status is guarded)', async () => {
    // arrange: the VM as the first pass's metadata write left it (finalizer, observed API
    // version), so the stale pass's only VM write is its first status
    const manifest = vmManifest('stale-1', { runStrategy: 'Manual' }, [VM_CONTROLLER_FINALIZER]);
    manifest.metadata!.annotations = { [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' };
    await h.kube.create(VMS, manifest);
    const staleVm = await h.kube.get(VMS, NS, 'stale-1');
    assert.equal(staleVm?.status, undefined);
    await h.kube.patch(VMS, NS, 'stale-1', { type: 'merge', body: { status: { stateChangeRequests: [{ action: 'Start' }] } } }, { subresource: 'status' });
    // A watch-cache read (or a retried pass) served the VM as it was before the request.
    const kube = new Proxy(h.deps.kube, {
      get(target, prop, receiver) {
        if (prop === 'get') return async (...args: Parameters<typeof target.get>) => (args[0] === VMS ? structuredClone(staleVm) : target.get(...args));
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    // act
    const stale = await reconcileVm(`${NS}/stale-1`, { ...h.deps, kube }).then(() => 'done', (err: Error) => err.message);
    // assert
    assert.match(stale, /patch virtualmachines .*test operation failed/, 'its status write conflicts: the resourceVersion it read is not the current one');
    assert.deepEqual(objectActions(server), [], 'no write of the stale pass landed');
    assert.deepEqual((await vmStatus('stale-1'))?.stateChangeRequests, [{ action: 'Start' }], 'the Start request survives the stale pass');
    await reconcileUntilSettled(server, h, `${NS}/stale-1`);
    assert.ok(await h.kube.get(VMIS, NS, 'stale-1'), 'the next pass, reading afresh, starts the VMI');
    assert.equal((await vmStatus('stale-1'))?.stateChangeRequests, undefined, 'and trims the request');
  });

  test('RerunOnFailure: a Failed VMI is deleted and recreated (a Start request carries the restart)', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('rerun-1', { runStrategy: 'RerunOnFailure' }));
    await reconcileUntilSettled(server, h, `${NS}/rerun-1`);
    const firstUid = (await h.kube.get(VMIS, NS, 'rerun-1'))?.metadata?.uid;
    await setVmiStatus('rerun-1', { phase: 'Failed', phaseTransitionTimestamps: RAN });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/rerun-1`);
    // assert
    assert.deepEqual(objectActions(server), [
      'patch virtualmachines/status rerun-1', // Start request appended, before the delete
      'delete virtualmachineinstances rerun-1',
      'patch virtualmachines/status rerun-1',
      'patch virtualmachineinstances rerun-1', // finalizer released, the Failed VMI goes
      'create virtualmachineinstances rerun-1',
      'patch virtualmachines/status rerun-1',
    ]);
    const vmi = await h.kube.get(VMIS, NS, 'rerun-1');
    assert.ok(vmi && vmi.metadata?.uid !== firstUid, 'a new VMI replaced the failed one');
    assert.equal((await vmStatus('rerun-1'))?.stateChangeRequests, undefined);
  });

  test('RerunOnFailure: a Succeeded VMI is deleted and not recreated', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('rerun-2', { runStrategy: 'RerunOnFailure' }));
    await reconcileUntilSettled(server, h, `${NS}/rerun-2`);
    await setVmiStatus('rerun-2', { phase: 'Succeeded', phaseTransitionTimestamps: RAN });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/rerun-2`);
    // assert
    assert.ok(!objectActions(server).some((a) => a.startsWith('create virtualmachineinstances')), `no new VMI: ${objectActions(server).join(', ')}`);
    assert.equal(await h.kube.get(VMIS, NS, 'rerun-2'), undefined);
    assert.equal((await vmStatus('rerun-2'))?.printableStatus, 'Stopped');
  });

  test('Once: a Succeeded VMI stays and is not recreated; the VM releases it', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('once-1', { runStrategy: 'Once' }));
    await reconcileUntilSettled(server, h, `${NS}/once-1`);
    await setVmiStatus('once-1', { phase: 'Succeeded', phaseTransitionTimestamps: RAN });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/once-1`);
    // assert
    assert.deepEqual(objectActions(server), ['patch virtualmachines/status once-1', 'patch virtualmachineinstances once-1']);
    const vmi = await h.kube.get(VMIS, NS, 'once-1');
    assert.equal(vmi?.status?.phase, 'Succeeded', 'the finished VMI is kept');
    assert.deepEqual(vmi?.metadata?.finalizers ?? [], [], 'but no longer held by the VM');
    assert.equal((await vmStatus('once-1'))?.printableStatus, 'Stopped');
  });

  test('restart request (Stop this VMI + Start): deleted, then recreated', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('restart-1', { runStrategy: 'Always' }));
    await reconcileUntilSettled(server, h, `${NS}/restart-1`);
    const old = await h.kube.get(VMIS, NS, 'restart-1');
    await setVmiStatus('restart-1', { phase: 'Running', phaseTransitionTimestamps: RAN, conditions: READY });
    await reconcileUntilSettled(server, h, `${NS}/restart-1`);
    await h.kube.patch(VMS, NS, 'restart-1', { type: 'merge', body: { status: { stateChangeRequests: [{ action: 'Stop', uid: old?.metadata?.uid }, { action: 'Start' }] } } }, { subresource: 'status' });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/restart-1`);
    await setVmiStatus('restart-1', { phase: 'Succeeded', phaseTransitionTimestamps: RAN }); // guest shut down
    await reconcileUntilSettled(server, h, `${NS}/restart-1`);
    // assert
    const did = objectActions(server);
    const del = did.indexOf('delete virtualmachineinstances restart-1');
    const create = did.indexOf('create virtualmachineinstances restart-1');
    assert.ok(del >= 0 && create > del, `delete then create: ${did.join(', ')}`);
    const now = await h.kube.get(VMIS, NS, 'restart-1');
    assert.ok(now && now.metadata?.uid !== old?.metadata?.uid, 'a new VMI');
    assert.equal((await vmStatus('restart-1'))?.stateChangeRequests, undefined, 'both requests done');
  });

  test('DataVolume template: DV created with owner ref, VMI only once the DV Succeeded', async () => {
    // arrange
    const vm = vmManifest('dv-1', {
      runStrategy: 'Always',
      dataVolumeTemplates: [{ metadata: { name: 'dv-1-root' }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } }],
    });
    vm.spec.template.spec!.volumes = [{ name: 'root', dataVolume: { name: 'dv-1-root' } }];
    await h.kube.create(VMS, vm);
    // act
    await reconcileUntilSettled(server, h, `${NS}/dv-1`);
    const waiting = { actions: actions(server), status: (await vmStatus('dv-1'))?.printableStatus };
    const dv = await h.kube.get(DATA_VOLUMES, NS, 'dv-1-root');
    server.audit.clear();
    // CDI's part, by hand: the import finished
    await setDataVolumePhase('dv-1-root', 'Succeeded');
    await reconcileUntilSettled(server, h, `${NS}/dv-1`);
    // assert
    assert.deepEqual(waiting.actions, [
      'patch virtualmachines dv-1', // the finalizer
      'create datavolumes dv-1-root',
      'event SuccessfulDataVolumeCreate',
      'patch virtualmachines/status dv-1',
    ]);
    assert.equal(waiting.status, 'Provisioning');
    const ref = dv?.metadata?.ownerReferences?.[0];
    assert.deepEqual([ref?.kind, ref?.name, ref?.controller], ['VirtualMachine', 'dv-1', true]);
    assert.equal(dv?.metadata?.annotations?.['cdi.kubevirt.io/allowClaimAdoption'], 'true');
    assert.deepEqual(objectActions(server), [await startRevisionCreate('dv-1'), 'create virtualmachineinstances dv-1', 'patch virtualmachines/status dv-1']);
  });

  test('the same key reconciled concurrently 5× creates exactly one VMI', async () => {
    // arrange: the finalizer is already there, so all five reach the start decision
    await h.kube.create(VMS, vmManifest('race-1', { runStrategy: 'Always' }, [VM_CONTROLLER_FINALIZER]));
    // act
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => reconcileVm(`${NS}/race-1`, h.deps)));
    // assert
    const creates = server.audit.query({ identity: CONTROLLER, resource: 'virtualmachineinstances', verb: 'create' });
    assert.equal(creates.length, 1, `exactly one VMI create; outcomes ${JSON.stringify(results.map((r) => r.status))}`);
  });

  test('start failures back off: CrashLoopBackOff, a requeue-after, then a new VMI once the time has passed', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('crash-1', { runStrategy: 'Always' }));
    await reconcileUntilSettled(server, h, `${NS}/crash-1`);
    await setVmiStatus('crash-1', { phase: 'Failed' }); // failed before ever running
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/crash-1`);
    const status = await vmStatus('crash-1');
    const vmiWhileBackingOff = await h.kube.get(VMIS, NS, 'crash-1');
    h.advance(11_000);
    server.audit.clear();
    await reconcileUntilSettled(server, h, `${NS}/crash-1`);
    // assert
    assert.deepEqual(settled.last, { kind: 'requeue', afterSeconds: 10, why: 'waiting (expectations or start backoff)' });
    assert.equal(status?.printableStatus, 'CrashLoopBackOff');
    assert.equal(status?.startFailure?.consecutiveFailCount, 1);
    assert.equal(vmiWhileBackingOff, undefined, 'the failed VMI was removed and not yet replaced');
    assert.ok(objectActions(server).includes('create virtualmachineinstances crash-1'), 'started again after the backoff');
  });

  test('legacy running: true behaves as Always; running together with runStrategy is a Failure', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('legacy-1', { running: true }));
    await h.kube.create(VMS, vmManifest('both-1', { running: true, runStrategy: 'Always' }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/legacy-1`);
    await reconcileUntilSettled(server, h, `${NS}/both-1`);
    // assert
    assert.ok(await h.kube.get(VMIS, NS, 'legacy-1'), 'running: true starts a VMI');
    assert.equal(await h.kube.get(VMIS, NS, 'both-1'), undefined);
    const failure = (await vmStatus('both-1'))?.conditions?.find((c) => c.type === 'Failure');
    assert.deepEqual([failure?.status, failure?.reason], ['True', 'FailedCreate']);
  });

  test('API calls per VM start (Always, no DataVolumes): 2 reads and 5 writes, then 2 reads to confirm', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('calls-1', { runStrategy: 'Always' }));
    server.counters.reset();
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/calls-1`);
    const calls = server.counters.snapshot().filter((c) => c.identity === CONTROLLER);
    const by = (verb: string) => calls.filter((c) => c.verb === verb).reduce((n, c) => n + c.count, 0);
    // assert: get VM + get VMI; patch VM (finalizer), create the start revision, create VMI, create Event,
    // patch VM status (no firmware UUID write: virt-api's VM webhook gave the template one);
    // then the settling pass reads the VM and the VMI (and lowers the creation expectation).
    assert.equal(settled.passes, 2);
    assert.deepEqual({ get: by('get'), list: by('list'), create: by('create'), patch: by('patch'), update: by('update'), delete: by('delete') }, { get: 4, list: 0, create: 3, patch: 2, update: 0, delete: 0 });
  });

  test('storage locks: no VMI starts while a restore is in progress; a snapshot lock (status and finalizer) survives every pass', async () => {
    // arrange: a restore and a snapshot hold the VM (the restore and snapshot controllers' writes)
    await h.kube.create(VMS, { ...vmManifest('locked-1', { runStrategy: 'Always' }), metadata: { name: 'locked-1', namespace: NS, finalizers: ['snapshot.kubevirt.io/snapshot-source-protection'] } });
    await h.kube.patch(VMS, NS, 'locked-1', { type: 'merge', body: { status: { restoreInProgress: 'r1', snapshotInProgress: 's1' } } }, { subresource: 'status' });
    // act
    await reconcileUntilSettled(server, h, `${NS}/locked-1`);
    const held = await h.kube.get(VMIS, NS, 'locked-1');
    await h.kube.patch(VMS, NS, 'locked-1', { type: 'merge', body: { status: { restoreInProgress: null } } }, { subresource: 'status' });
    await reconcileUntilSettled(server, h, `${NS}/locked-1`);
    // assert
    assert.equal(held, undefined, 'nothing starts under a restore');
    assert.ok(await h.kube.get(VMIS, NS, 'locked-1'), 'started once the restore let go');
    const vm = await h.kube.get(VMS, NS, 'locked-1');
    assert.equal(vm?.status?.snapshotInProgress, 's1', 'the snapshot lock is not the VM controller’s to clear');
    assert.ok(vm?.metadata?.finalizers?.includes('snapshot.kubevirt.io/snapshot-source-protection'));
    assert.ok(vm?.metadata?.finalizers?.includes(VM_CONTROLLER_FINALIZER));
  });

  test('VM deletion: its VMI is stopped first, then the VM finalizer goes', async () => {
    // arrange
    await h.kube.create(VMS, vmManifest('del-1', { runStrategy: 'Always' }));
    await reconcileUntilSettled(server, h, `${NS}/del-1`);
    await setVmiStatus('del-1', { phase: 'Running', phaseTransitionTimestamps: RAN });
    await deleteVm('del-1');
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/del-1`);
    const terminating = (await vmStatus('del-1'))?.printableStatus;
    await setVmiStatus('del-1', { phase: 'Succeeded', phaseTransitionTimestamps: RAN });
    await reconcileUntilSettled(server, h, `${NS}/del-1`);
    await reconcileUntilSettled(server, h, `${NS}/del-1`);
    // assert
    assert.equal(terminating, 'Terminating');
    assert.equal(await h.kube.get(VMIS, NS, 'del-1'), undefined);
    assert.equal(await h.kube.get(VMS, NS, 'del-1'), undefined, 'the VM went once its finalizer was removed');
    assert.equal(objectActions(server)[0], 'delete virtualmachineinstances del-1');
  });
});

async function setDataVolumePhase(name: string, phase: string): Promise<void> {
  const res = await fetch(`${server.url}/apis/cdi.kubevirt.io/v1beta1/namespaces/${NS}/datavolumes/${name}/status`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json', authorization: 'Bearer test' },
    body: JSON.stringify({ status: { phase, conditions: [{ type: 'Bound', status: 'True' }, { type: 'Ready', status: 'True' }] } }),
  });
  if (!res.ok) throw new Error(`patch DataVolume status: ${res.status} ${await res.text()}`);
}

async function deleteVm(name: string): Promise<void> {
  const res = await fetch(`${server.url}/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}`, { method: 'DELETE', headers: { authorization: 'Bearer test' } });
  if (!res.ok) throw new Error(`delete VM: ${res.status} ${await res.text()}`);
}
