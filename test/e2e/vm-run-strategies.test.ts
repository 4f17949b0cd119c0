/**
 * The VM controller end to end: sandbox cluster ← relay → SQLite queue → VM, VMI (and migration)
 * functions, all real (LocalRuntime). Nothing is set by hand except what a user does (create a
 * VM, `virtctl start/stop/restart`, which edit the VM's spec or its status' state-change
 * requests as virt-api does), what a crashing or shutting-down guest does (its launcher pod ends,
 * through the kubelet's test hook) and what CDI would do for a DataVolume. The simulated
 * scheduler, kubelet and virt-handler move pods and VMIs on; the clock runs 20× so start-failure
 * backoffs pass in a fraction of a real second.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import type { LocalRuntime } from '../../local/runtime.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { HANDED_OFF, launcherPods, newRuntime, NS, phases, queueIdle, startSlice, until, vmiManifest, vmManifest, type Slice } from './support.ts';
import { DATA_VOLUMES, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { KubeTransientError } from '../../shared/kube/errors.ts';
import { emulatorOnly } from '../support/lanes.ts';

const SPEED = 20;
/** Simulated ms: with SPEED 20 each is 50 real ms. */
const TIMINGS = { podStartupMs: 1000, vmiBootMs: 1000, vmiShutdownMs: 1000 };
const CONTROLLERS = ['vm', 'vmi'] as const;

type Spec = Partial<VirtualMachine['spec']>;
type Printable = 'Running' | 'Stopped';

async function getVm(s: Slice, name: string): Promise<VirtualMachine> {
  const vm = await s.kube.get(VMS, NS, name);
  assert.ok(vm, `VM ${name} is gone`);
  return vm;
}

/** Appends state-change requests through the VM's status subresource, as virt-api does for virtctl. */
async function requestStateChange(s: Slice, name: string, requests: { action: 'Start' | 'Stop'; uid?: string }[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const vm = await getVm(s, name);
    const current = vm.status?.stateChangeRequests;
    // `test` first: a request written over a concurrent status change would be lost (virt-api tests
    // too); a failed test (422) means the controller wrote meanwhile: read again and retry, as virt-api does.
    const ops = current
      ? [{ op: 'test' as const, path: '/status/stateChangeRequests', value: current }, { op: 'replace' as const, path: '/status/stateChangeRequests', value: [...current, ...requests] }]
      : [{ op: 'test' as const, path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add' as const, path: '/status/stateChangeRequests', value: requests }];
    try {
      await s.kube.patch(VMS, NS, name, { type: 'json', ops }, { subresource: 'status' });
      return;
    } catch (err) {
      // A failed `test` op is the client's Conflict (shared/kube/errors.ts): re-read and retry.
      if (!(err instanceof KubeTransientError && err.reason === 'Conflict') || attempt >= 10) throw err;
    }
  }
}

async function setSpec(s: Slice, name: string, spec: Spec): Promise<void> {
  await s.kube.patch(VMS, NS, name, { type: 'merge', body: { spec } });
}

/**
 * What `virtctl start|stop|restart` asks of the API for this VM: legacy `running` flips; Always and
 * Once stop by switching to Halted; Manual and RerunOnFailure start and stop by requests; Halted
 * starts by switching to Always; a restart is a Stop for the current VMI followed by a Start.
 */
async function virtctl(s: Slice, name: string, verb: 'start' | 'stop' | 'restart'): Promise<void> {
  const vm = await getVm(s, name);
  const uid = (await s.kube.get(VMIS, NS, name))?.metadata?.uid;
  const strategy = vm.spec.runStrategy;
  if (verb === 'restart') return requestStateChange(s, name, [{ action: 'Stop', ...(uid ? { uid } : {}) }, { action: 'Start' }]);
  if (vm.spec.running !== undefined) return setSpec(s, name, { running: verb === 'start' });
  if (strategy === 'Manual' || strategy === 'RerunOnFailure') {
    return requestStateChange(s, name, [verb === 'start' ? { action: 'Start' } : { action: 'Stop', ...(uid ? { uid } : {}) }]);
  }
  return setSpec(s, name, { runStrategy: verb === 'start' ? 'Always' : 'Halted' });
}

/**
 * Waits until the VM shows `want` and its VMI agrees: Running = a Running VMI whose UID is not
 * in `oldUids`; Stopped = no VMI at all. Returns the VMI's UID (or '').
 */
async function untilVm(s: Slice, name: string, want: Printable, oldUids: ReadonlySet<string> = new Set()): Promise<string> {
  const seen: string[] = [];
  let uid = '';
  const what = `VM ${name} ${want}${oldUids.size ? ` (a VMI other than ${[...oldUids].join(', ')})` : ''}`;
  try {
    await until(
      what,
      async () => {
        const [vm, vmi] = await Promise.all([s.kube.get(VMS, NS, name), s.kube.get(VMIS, NS, name)]);
        const st = vm?.status?.printableStatus;
        if (st && seen.at(-1) !== st) seen.push(st);
        uid = vmi?.metadata?.uid ?? '';
        if (want === 'Stopped') return st === 'Stopped' && vmi === undefined;
        return st === 'Running' && vmi?.status?.phase === 'Running' && !oldUids.has(uid);
      },
      { problems: s.problems },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\nVM statuses seen: ${seen.join(' → ')}`, { cause: err });
  }
  return uid;
}

/** Waits until both the VM and VMI queues are idle: whatever the controllers were going to do is done. */
async function settled(s: Slice): Promise<void> {
  await until('vm and vmi queues idle', () => queueIdle(s, CONTROLLERS), { problems: s.problems });
}

describe('VM run strategies through the runtime and the sandbox', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ speed: SPEED, timings: TIMINGS });
  });
  after(async () => {
    await s.stop();
  });

  /** The user's steps, in order, and the state each one leads to. */
  interface Step {
    readonly act: 'create' | 'start' | 'stop' | 'restart' | 'Start request';
    readonly then: Printable;
  }
  const created = (then: Printable): Step => ({ act: 'create', then });
  const LIFECYCLES: readonly { name: string; spec: Spec; steps: readonly Step[] }[] = [
    { name: 'always', spec: { runStrategy: 'Always' }, steps: [created('Running'), { act: 'stop', then: 'Stopped' }, { act: 'start', then: 'Running' }, { act: 'restart', then: 'Running' }] },
    { name: 'running-true', spec: { running: true }, steps: [created('Running'), { act: 'stop', then: 'Stopped' }, { act: 'start', then: 'Running' }, { act: 'restart', then: 'Running' }] },
    { name: 'rerun', spec: { runStrategy: 'RerunOnFailure' }, steps: [created('Running'), { act: 'stop', then: 'Stopped' }, { act: 'start', then: 'Running' }, { act: 'restart', then: 'Running' }] },
    { name: 'manual', spec: { runStrategy: 'Manual' }, steps: [created('Stopped'), { act: 'start', then: 'Running' }, { act: 'stop', then: 'Stopped' }, { act: 'start', then: 'Running' }, { act: 'restart', then: 'Running' }] },
    // A Start request on a Halted VM (what `virtctl start --paused` leaves) switches it to Always.
    { name: 'halted', spec: { runStrategy: 'Halted' }, steps: [created('Stopped'), { act: 'Start request', then: 'Running' }, { act: 'stop', then: 'Stopped' }, { act: 'start', then: 'Running' }] },
    { name: 'running-false', spec: { running: false }, steps: [created('Stopped'), { act: 'start', then: 'Running' }, { act: 'stop', then: 'Stopped' }] },
    { name: 'once', spec: { runStrategy: 'Once' }, steps: [created('Running'), { act: 'stop', then: 'Stopped' }] },
  ];

  for (const { name, spec, steps } of LIFECYCLES) {
    test(`${JSON.stringify(spec)}: ${steps.map((st) => `${st.act} → ${st.then}`).join(', ')}; every start a new VMI`, async () => {
      const vmName = `life-${name}`;
      const uids = new Set<string>();
      for (const [i, step] of steps.entries()) {
        // arrange: the previous step's state (checked by the previous iteration)
        // act
        if (step.act === 'create') await s.kube.create(VMS, vmManifest(vmName, spec));
        else if (step.act === 'Start request') await requestStateChange(s, vmName, [{ action: 'Start' }]);
        else await virtctl(s, vmName, step.act);
        // assert
        const uid = await untilVm(s, vmName, step.then, uids);
        if (step.then === 'Stopped') {
          // No VMI now; and none comes once the controllers have nothing left to do.
          await settled(s);
          assert.equal(await s.kube.get(VMIS, NS, vmName), undefined, `step ${i + 1} (${step.act}): a VMI appeared after the VM settled Stopped`);
          continue;
        }
        uids.add(uid);
        const vmi = await s.kube.get(VMIS, NS, vmName);
        const ref = vmi?.metadata?.ownerReferences?.find((r) => r.controller);
        assert.deepEqual([ref?.kind, ref?.name], ['VirtualMachine', vmName], `step ${i + 1}: VMI controlled by its VM`);
        assert.equal((await launcherPods(s.kube, uid)).length, 1, `step ${i + 1}: one launcher pod for VMI ${uid}`);
      }
      const vm = await getVm(s, vmName);
      assert.equal(vm.status?.stateChangeRequests, undefined, 'every state-change request was served and trimmed');
      if (name === 'halted') assert.equal(vm.spec.runStrategy, 'Always', 'the Start request switched the Halted VM to Always');
    });
  }

  /** What becomes of a running VM when its guest ends on its own. */
  const GUEST_ENDS: readonly { spec: Spec; ends: 'Failed' | 'Succeeded'; recreated: boolean }[] = [
    { spec: { runStrategy: 'Always' }, ends: 'Failed', recreated: true },
    { spec: { running: true }, ends: 'Failed', recreated: true },
    { spec: { runStrategy: 'RerunOnFailure' }, ends: 'Failed', recreated: true },
    { spec: { runStrategy: 'Once' }, ends: 'Failed', recreated: false },
    { spec: { runStrategy: 'Manual' }, ends: 'Failed', recreated: false },
    { spec: { runStrategy: 'Always' }, ends: 'Succeeded', recreated: true },
    { spec: { runStrategy: 'RerunOnFailure' }, ends: 'Succeeded', recreated: false },
    { spec: { runStrategy: 'Once' }, ends: 'Succeeded', recreated: false },
  ];

  for (const [i, { spec, ends, recreated }] of GUEST_ENDS.entries()) {
    const how = ends === 'Failed' ? 'guest crashes (launcher pod Failed)' : 'guest shuts down (launcher pod Succeeded)';
    test(`${JSON.stringify(spec)}: ${how} → ${recreated ? 'a new VMI runs' : 'stays stopped, no new VMI'}`, async () => {
      // arrange
      const vmName = `ends-${i}`;
      await s.kube.create(VMS, vmManifest(vmName, spec));
      if (spec.runStrategy === 'Manual') {
        await until(`${vmName} has a status`, async () => (await getVm(s, vmName)).status !== undefined);
        await virtctl(s, vmName, 'start');
      }
      const first = await untilVm(s, vmName, 'Running');
      const [pod] = await launcherPods(s.kube, first);
      // act
      await s.sandbox.kubelet.finishPod(NS, pod ?? '', ends);
      // assert
      await until(`${vmName}: virt-handler reports the VMI ${ends}`, async () => {
        const vmi = await s.kube.get(VMIS, NS, vmName);
        return vmi?.metadata?.uid !== first || vmi?.status?.phase === ends;
      }, { problems: s.problems });
      if (recreated) {
        const second = await untilVm(s, vmName, 'Running', new Set([first]));
        assert.notEqual(second, first);
        assert.equal((await launcherPods(s.kube, second)).length, 1, 'one launcher pod for the new VMI');
        assert.equal((await getVm(s, vmName)).status?.startFailure, undefined, 'a VMI that ran is no start failure');
        return;
      }
      await until(`${vmName} Stopped`, async () => (await getVm(s, vmName)).status?.printableStatus === 'Stopped', { problems: s.problems });
      await settled(s);
      const vmi = await s.kube.get(VMIS, NS, vmName);
      assert.ok(vmi === undefined || vmi.metadata?.uid === first, `a new VMI ${vmi?.metadata?.uid} was started`);
      assert.equal((await getVm(s, vmName)).status?.printableStatus, 'Stopped');
    });
  }

  test('a VM with a dataVolumeTemplate: the DataVolume is created, the VMI waits for it, then runs', async () => {
    // arrange
    const vmName = 'with-dv';
    const dvName = `${vmName}-root`;
    const vm = vmManifest(vmName, {
      runStrategy: 'Always',
      dataVolumeTemplates: [{ metadata: { name: dvName }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } }],
    });
    vm.spec.template.spec!.volumes = [{ name: 'containerdisk', dataVolume: { name: dvName } }];
    // act
    await s.kube.create(VMS, vm);
    await until(`${vmName} Provisioning`, async () => (await getVm(s, vmName)).status?.printableStatus === 'Provisioning', { problems: s.problems });
    await settled(s);
    const waiting = { dv: await s.kube.get(DATA_VOLUMES, NS, dvName), vmi: await s.kube.get(VMIS, NS, vmName) };
    // CDI's part, by hand: the claim exists and the import finished
    await cdiImported(s, dvName);
    const uid = await untilVm(s, vmName, 'Running');
    // assert
    assert.ok(waiting.dv, 'the DataVolume was created');
    assert.deepEqual(waiting.dv.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['VirtualMachine', vmName, true]]);
    assert.equal(waiting.vmi, undefined, 'no VMI while the DataVolume was provisioning');
    const [podName] = await launcherPods(s.kube, uid);
    const pod = await s.kube.get(PODS, NS, podName ?? '');
    assert.ok(pod?.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === dvName), 'the launcher pod mounts the DataVolume\'s claim');
  });
});

/**
 * What CDI and the PV controller do when an import completes: a volume, a PVC owned by the
 * DataVolume bound to it (`spec.volumeName`: the schedulers place no pod on an unbound claim), and
 * the DataVolume Succeeded.
 */
async function cdiImported(s: Slice, dvName: string): Promise<void> {
  const dv = await s.kube.get(DATA_VOLUMES, NS, dvName);
  const pv = `pv-${dvName}`;
  const claim = await s.kube.create(PVCS, {
    metadata: { name: dvName, namespace: NS, ownerReferences: [{ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: dvName, uid: dv?.metadata?.uid ?? '', controller: true }] },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeName: pv },
  });
  // Bound both ways, the claim's UID in the volume's claimRef: the kubelet mounts nothing less.
  await s.sandbox.apiServer.kubeConfig('test').makeApiClient(CoreV1Api).createPersistentVolume({
    body: { metadata: { name: pv }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/var/lib/sandbox/${dvName}` }, storageClassName: '', claimRef: { namespace: NS, name: dvName, uid: claim.metadata?.uid ?? '' } } },
  });
  await s.kube.patch(PVCS, NS, dvName, { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
  const status = { phase: 'Succeeded', progress: '100.0%', conditions: [{ type: 'Bound', status: 'True' }, { type: 'Ready', status: 'True' }, { type: 'Running', status: 'False', reason: 'Completed' }] };
  await s.kube.patch(DATA_VOLUMES, NS, dvName, { type: 'merge', body: { status } }, { subresource: 'status' });
}

describe('VM crash loop: a VMI that fails before it ever runs', () => {
  let s: Slice;
  before(async () => {
    // The guest never finishes booting (VMIs stay Scheduled), so a failing launcher is a failed start.
    s = await startSlice({ speed: SPEED, timings: { ...TIMINGS, vmiBootMs: 24 * 3_600_000 } });
  });
  after(async () => {
    await s.stop();
  });

  test('Always: each failed start is counted, the VM shows CrashLoopBackOff and the next VMI waits out the backoff', emulatorOnly('compares the backoff, measured on the sped-up sandbox clock, with VMI creation timestamps; the real server stamps those with the wall clock'), async () => {
    // arrange
    const vmName = 'crashloop';
    await s.kube.create(VMS, vmManifest(vmName, { runStrategy: 'Always' }));
    const failures: { uid: string; count: number; retryAfter: string }[] = [];
    const statuses: string[] = [];
    const uids: string[] = [];
    for (let round = 1; round <= 2; round++) {
      let uid = '';
      await until(`${vmName}: VMI #${round} Scheduled`, async () => {
        const vmi = await s.kube.get(VMIS, NS, vmName);
        uid = vmi?.metadata?.uid ?? '';
        return vmi?.status?.phase === 'Scheduled' && !uids.includes(uid);
      }, { problems: s.problems });
      uids.push(uid);
      const [pod] = await launcherPods(s.kube, uid);
      // act: the launcher dies before the domain ever ran
      await s.sandbox.kubelet.finishPod(NS, pod ?? '', 'Failed');
      await until(`${vmName}: start failure #${round} recorded`, async () => {
        const vm = await getVm(s, vmName);
        const st = vm.status?.printableStatus;
        if (st && statuses.at(-1) !== st) statuses.push(st);
        const sf = vm.status?.startFailure;
        if (sf?.lastFailedVMIUID !== uid) return false;
        failures.push({ uid, count: sf.consecutiveFailCount ?? 0, retryAfter: sf.retryAfterTimestamp ?? '' });
        return true;
      }, { problems: s.problems });
    }
    let third: VirtualMachine['status'] | undefined;
    let thirdCreated = '';
    await until(`${vmName}: VMI #3 created`, async () => {
      const [vm, vmi] = await Promise.all([getVm(s, vmName), s.kube.get(VMIS, NS, vmName)]);
      const st = vm.status?.printableStatus;
      if (st && statuses.at(-1) !== st) statuses.push(st);
      third = vm.status;
      thirdCreated = vmi?.metadata?.creationTimestamp ?? '';
      return vmi !== undefined && !uids.includes(vmi.metadata?.uid ?? '');
    }, { problems: s.problems });
    // assert
    assert.deepEqual(failures.map((f) => [f.uid, f.count]), uids.map((u, i) => [u, i + 1]), 'one start failure counted per failed VMI');
    assert.ok(statuses.includes('CrashLoopBackOff'), `statuses seen: ${statuses.join(' → ')}`);
    // Second failure: 10 s × 2² = 40 s (+ up to half of it as jitter), on the simulated clock.
    const [, second] = failures;
    assert.ok(second, 'second failure');
    assert.ok(thirdCreated !== '', 'third VMI');
    const secondFailedAt = Date.parse(second.retryAfter);
    assert.ok(Date.parse(thirdCreated) >= Math.floor(secondFailedAt / 1000) * 1000, `VMI #3 created at ${thirdCreated}, before the backoff ended at ${second.retryAfter}`);
    assert.equal(third?.startFailure?.consecutiveFailCount, 2, 'the count stays until a VMI runs');
  });
});

describe('nothing lost across a restart of the embedded queue', () => {
  let s: Slice;
  let dir: string;
  const runtimes: LocalRuntime[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vm-e2e-queue-'));
    // The slice's own (in-memory) runtime is never started: this test runs its own two on a file.
    // A slow pod start: the first runtime can be stopped while some VMIs are Scheduled and others not yet.
    s = await startSlice({ start: false, timings: { podStartupMs: 300, vmiBootMs: 3_600_000 } });
  });
  after(async () => {
    for (const rt of runtimes.splice(0)) await rt.stop();
    await s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('20 VMIs, runtime stopped after some are Scheduled, a new runtime on the same SQLite file → all 20 Scheduled, one launcher pod each', async () => {
    // arrange
    const dbPath = join(dir, 'queue.db');
    const names = Array.from({ length: 20 }, (_, i) => `restart-${String(i).padStart(2, '0')}`);
    const first = newRuntime(s.sandbox, s.problems, { dbPath, workers: { vmi: 1 } });
    runtimes.push(first);
    first.start();
    await until('relay ready', () => first.relay.ready);
    for (const n of names) await s.kube.create(VMIS, vmiManifest(n));
    await until('some VMIs Scheduled', async () => [...(await phases(s.kube, names)).values()].some((p) => p === 'Scheduled'), { problems: s.problems });
    // act
    await runtimes.pop()?.stop();
    const atStop = await phases(s.kube, names);
    const second = newRuntime(s.sandbox, s.problems, { dbPath });
    runtimes.push(second);
    second.start();
    await until('all 20 Scheduled', async () => [...(await phases(s.kube, names)).values()].every((p) => p === 'Scheduled'), { tries: 6000, problems: s.problems });
    // assert
    const scheduledAtStop = [...atStop.values()].filter((p) => HANDED_OFF.has(p ?? '')).length;
    console.log(`runtime stopped with ${scheduledAtStop}/${names.length} VMIs Scheduled; phases: ${JSON.stringify(Object.fromEntries(atStop))}`);
    assert.ok(scheduledAtStop > 0 && scheduledAtStop < names.length, `the runtime was stopped mid-way: ${scheduledAtStop}/${names.length} Scheduled`);
    for (const n of names) {
      const uid = (await s.kube.get(VMIS, NS, n))?.metadata?.uid ?? '';
      assert.equal((await launcherPods(s.kube, uid)).length, 1, `${n}: launcher pods`);
    }
  });
});
