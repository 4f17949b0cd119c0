/**
 * The vertical slice end to end: sandbox cluster ← relay → SQLite queue → VMI function → SQLite
 * table, all real, in one process (LocalRuntime). Nothing is set by hand on the cluster side:
 * the simulated scheduler, kubelet and virt-handler move pods and VMIs on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { vmiController } from '../../functions/vmi/controller.ts';
import { reconcileVmi } from '../../functions/vmi/reconcile.ts';
import { isPermanent } from '../../shared/errors.ts';
import type { KubeClient, KubeObject, Resource } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { HANDED_OFF, launcherPods, NS, phases, queueIdle, RUNTIME_IDENTITIES, startSlice, until, vmiManifest, type Slice } from './support.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { emulatorOnly } from '../support/lanes.ts';
import { testSpec } from '../support/controller-context.ts';
import { WRITE_FENCE_SCOPE } from '../../shared/reconcile/write-fence.ts';
import { vmiPodsSelector } from '../../shared/api/well-known.ts';

function keyMessage(name: string, rv: string, uid = 'test'): KeyMessage {
  return { v: 1, controller: 'vmi', key: `${NS}/${name}`, cause: { kind: 'VirtualMachineInstance', namespace: NS, name, uid, resourceVersion: rv, event: 'MODIFIED', seenAt: Date.now() } };
}

async function phaseOf(s: Slice, name: string): Promise<string | undefined> {
  return (await s.kube.get(VMIS, NS, name))?.status?.phase;
}

describe('VMI slice: lifecycle', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice();
  });
  after(async () => {
    await s.stop();
  });

  test('VMI → launcher pod → Scheduled → Running (by the simulated virt-handler)', async () => {
    // arrange
    const seen: string[] = [];
    // act
    const vmi = await s.kube.create(VMIS, vmiManifest('life-1'));
    await until(
      'life-1 Running',
      async () => {
        const p = await phaseOf(s, 'life-1');
        if (p && seen.at(-1) !== p) seen.push(p);
        return p === 'Running';
      },
      { problems: s.problems },
    );
    // assert
    const pods = await launcherPods(s.kube, vmi.metadata?.uid ?? '');
    assert.equal(pods.length, 1, `launcher pods: ${pods.join(', ')}`);
    const got = await s.kube.get(VMIS, NS, 'life-1');
    assert.ok(got?.status?.nodeName, 'handed off to a node');
    assert.equal(got?.metadata?.annotations?.['kubevirt.io/latest-observed-api-version'], 'v1');
    for (const p of ['Scheduling', 'Scheduled']) {
      assert.ok(got?.status?.phaseTransitionTimestamps?.some((t) => t.phase === p), `no ${p} transition recorded; phases seen: ${seen.join(' → ')}`);
    }
  });

  test('a Running VMI turns Ready=True: the launcher pod\'s readiness gate is set, the kubelet marks it Ready', async () => {
    // arrange
    const vmi = await s.kube.create(VMIS, vmiManifest('ready-1'));
    // act
    await until(
      'ready-1 Ready=True',
      async () => (await s.kube.get(VMIS, NS, 'ready-1'))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      { problems: s.problems },
    );
    // assert: the pod carries the gate condition, and is Ready because of it
    const [podName] = await launcherPods(s.kube, vmi.metadata?.uid ?? '');
    const pod = await s.kube.get(PODS, NS, podName ?? '');
    const cond = (type: string) => pod?.status?.conditions?.find((c) => c.type === type);
    assert.deepEqual([cond('kubevirt.io/virtual-machine-unpaused')?.status, cond('kubevirt.io/virtual-machine-unpaused')?.reason], ['True', 'NotPaused']);
    assert.equal(cond('Ready')?.status, 'True', 'the kubelet honours the readiness gate');
    assert.equal((await s.kube.get(VMIS, NS, 'ready-1'))?.status?.phase, 'Running');
  });

  test('the same key 5× at once through the instrumented handler (racing the runtime) → one launcher pod', async () => {
    // arrange
    const { rt } = s;
    const handle = instrumented(testSpec(vmiController, { kube: rt.kube, expectations: rt.state.expectations, clusterConfig: cachedClusterConfig(rt.kube), log: silentLogger }), { kube: rt.kube, metrics: rt.metrics, log: silentLogger });
    const vmi = await s.kube.create(VMIS, vmiManifest('dup-direct'));
    const rk = (i: number): ReceivedKey => ({ message: keyMessage('dup-direct', vmi.metadata?.resourceVersion ?? '', vmi.metadata?.uid), receipt: `direct.${i}`, attempt: 1, enqueuedAt: Date.now(), coalesced: 1 });
    // act
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => handle(rk(i))));
    console.log('5 concurrent reconciles of one key:', results.map((r) => (r.status === 'fulfilled' ? r.value.kind : (r.reason as Error).message)).join(' | '));
    await until('dup-direct handed off', async () => HANDED_OFF.has((await phaseOf(s, 'dup-direct')) ?? ''), { problems: s.problems });
    // assert
    const pods = await launcherPods(s.kube, vmi.metadata?.uid ?? '');
    assert.equal(pods.length, 1, `launcher pods: ${pods.join(', ')}; results: ${results.map((r) => r.status).join(',')}`);
    // Losers of the race fail transiently (retried by the queue), never permanently.
    const permanent = results.flatMap((r) => (r.status === 'rejected' && isPermanent(r.reason) ? [String(r.reason)] : []));
    assert.deepEqual(permanent, [], 'a racing reconcile failed permanently');
  });

  test('the same key delivered 5× at once through the runtime queue → one launcher pod', async () => {
    // arrange
    const vmi = await s.kube.create(VMIS, vmiManifest('dup-queue'));
    // act: five distinct causes (distinct dedup ids) for the one key, on top of the relay's own
    await s.rt.queue.send([1, 2, 3, 4, 5].map((i) => keyMessage('dup-queue', `${vmi.metadata?.resourceVersion}-${i}`, vmi.metadata?.uid)));
    await until('dup-queue handed off', async () => HANDED_OFF.has((await phaseOf(s, 'dup-queue')) ?? ''), { problems: s.problems });
    await until('queue idle', () => queueIdle(s));
    // assert
    const pods = await launcherPods(s.kube, vmi.metadata?.uid ?? '');
    assert.equal(pods.length, 1, `launcher pods: ${pods.join(', ')}`);
  });

  test('stale views — the VMI as it was before its pod, no pods, emptiness marked an answer — never make a second launcher pod', async () => {
    // arrange: a VMI whose launcher pod exists, and its write fence gone (a later relay, another
    // table): the message below says, as a lagging relay would, that nothing happened yet
    const vmi = await s.kube.create(VMIS, vmiManifest('stale-view'));
    const uid = vmi.metadata?.uid ?? '';
    await until('stale-view handed off', async () => HANDED_OFF.has((await phaseOf(s, 'stale-view')) ?? ''), { problems: s.problems });
    await until('queue idle', () => queueIdle(s));
    await s.rt.state.expectations.delete(WRITE_FENCE_SCOPE, `vmi/${NS}/stale-view`);
    const asCreated = { ...vmi, status: {} };
    const view = {
      reads: [
        { resource: 'virtualmachineinstances.kubevirt.io', namespace: NS, name: 'stale-view', items: [asCreated] },
        { resource: 'pods', namespace: NS, labelSelector: vmiPodsSelector(uid), items: [], trustEmptyWith: `virtualmachineinstances.kubevirt.io/${NS}/stale-view` },
      ],
    };
    // act: five such messages with distinct causes, each a first attempt
    await s.rt.queue.send([1, 2, 3, 4, 5].map((i) => ({ ...keyMessage('stale-view', `${vmi.metadata?.resourceVersion}-stale-${i}`, uid), view })));
    await until('queue idle', () => queueIdle(s));
    // assert: the pod creation record sent every such pass to the API server first
    const pods = await launcherPods(s.kube, uid);
    assert.equal(pods.length, 1, `launcher pods: ${pods.join(', ')}`);
    assert.ok(HANDED_OFF.has((await phaseOf(s, 'stale-view')) ?? ''), 'the VMI was not set back by a stale view');
  });

  test('launcher pod deleted before hand-off → VMI Failed, no second pod', async () => {
    // arrange: a nodeSelector no node matches keeps the pod Pending
    const vmi = await s.kube.create(VMIS, vmiManifest('lost-pod', { nodeSelector: { 'example.com/no-such-node': 'true' } }));
    const uid = vmi.metadata?.uid ?? '';
    await until('lost-pod Scheduling with a pod', async () => (await phaseOf(s, 'lost-pod')) === 'Scheduling' && (await launcherPods(s.kube, uid)).length === 1, { problems: s.problems });
    // The controller has seen its pod (it mirrors the scheduler's Unschedulable onto the VMI): a pod
    // deleted before that would leave its create expectation open until the takeover timeout.
    await until('lost-pod shows the pod Unschedulable', async () => (await s.kube.get(VMIS, NS, 'lost-pod'))?.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') === true, { problems: s.problems });
    const [podName] = await launcherPods(s.kube, uid);
    // act
    await s.kube.delete(PODS, NS, podName ?? '', { gracePeriodSeconds: 0 });
    await until('lost-pod Failed', async () => (await phaseOf(s, 'lost-pod')) === 'Failed', { problems: s.problems });
    await until('queue idle', () => queueIdle(s));
    // assert
    const pods = await launcherPods(s.kube, uid);
    assert.ok(pods.every((p) => p === podName), `a new launcher pod was created for a VMI past Pending: ${pods.join(', ')}`);
  });

  test('VMI deleted → its launcher pod goes', async () => {
    // arrange
    const vmi = await s.kube.create(VMIS, vmiManifest('to-delete'));
    const uid = vmi.metadata?.uid ?? '';
    await until('to-delete Running', async () => (await phaseOf(s, 'to-delete')) === 'Running', { problems: s.problems });
    assert.equal((await launcherPods(s.kube, uid)).length, 1);
    // act
    await s.kube.delete(VMIS, NS, 'to-delete');
    // assert
    await until('to-delete and its pod gone', async () => (await s.kube.get(VMIS, NS, 'to-delete')) === undefined && (await launcherPods(s.kube, uid)).length === 0, { problems: s.problems });
  });

  test('a malformed queue message is dead-lettered (MalformedMessage); other keys go on', async () => {
    // arrange
    await s.rt.queue.sendRaw('vmi', '{"v":1,"controller":"vmi","key":');
    await s.rt.queue.sendRaw('vmi', JSON.stringify({ v: 2, controller: 'vmi', key: 'default/x' }));
    // act
    await s.kube.create(VMIS, vmiManifest('after-malformed'));
    await until('after-malformed handed off', async () => HANDED_OFF.has((await phaseOf(s, 'after-malformed')) ?? ''), { problems: s.problems });
    // assert
    const dead = await s.rt.queue.listDeadLetters({ controller: 'vmi' });
    const malformed = dead.filter((d) => d.reason === 'MalformedMessage');
    assert.equal(malformed.length, 2, `dead letters: ${JSON.stringify(dead.map((d) => [d.key, d.reason]))}`);
    assert.ok(!dead.some((d) => d.key === `${NS}/after-malformed`), 'the good key was dead-lettered too');
  });
});

describe('VMI slice: a worker crashes between "create pod" and the status write', () => {
  let s: Slice;
  before(async () => {
    // Short leases so the crashed worker's key comes back quickly; the workers start later.
    s = await startSlice({ start: false, runtime: { visibilityTimeoutMs: 1000, createTakeoverMs: 1000 } });
    s.rt.relay.start();
  });
  after(async () => {
    await s.stop();
  });

  const CRASHES = [
    { name: 'createPod never returns', crash: (pod: V1Pod) => new Promise<V1Pod>(() => void pod) },
    { name: 'createPod throws after the pod was created', crash: () => Promise.reject(new Error('connection reset after the write')) },
  ];

  test('→ after the lease expires the runtime takes the key: one launcher pod, VMI Scheduled', async () => {
    // arrange
    const names = CRASHES.map((_, i) => `crash-${i}`);
    const uids = new Map<string, string>();
    for (const name of names) uids.set(name, (await s.kube.create(VMIS, vmiManifest(name))).metadata?.uid ?? '');
    // act: be the crashed workers — take each key off the runtime's queue, create the pod, die
    const taken = new Map<string, ReceivedKey>();
    await until('both keys received', async () => {
      for (const rk of await s.rt.queue.receive('vmi', 10, 0)) taken.set(rk.message.key, rk);
      return names.every((n) => taken.has(`${NS}/${n}`));
    });
    const created = new Set<string>();
    for (const [i, c] of CRASHES.entries()) {
      const crashing: KubeClient = Object.create(s.rt.kube, {
        create: {
          value: async <T extends KubeObject>(res: Resource<T>, obj: T) => {
            const made = await s.rt.kube.create(res, obj);
            if (res !== PODS) return made;
            created.add(names[i]!);
            return c.crash(made as V1Pod);
          },
        },
      }) as KubeClient;
      const spec = testSpec(vmiController, { kube: s.rt.kube, expectations: s.rt.state.expectations, clusterConfig: cachedClusterConfig(s.rt.kube), log: silentLogger, takeoverMs: 1000 });
      void reconcileVmi(`${NS}/${names[i]}`, spec.deps(crashing)).catch(() => undefined); // never settled
    }
    await until('the crashed workers created their pods', () => created.size === names.length);
    for (const p of s.rt.pools) p.start(); // the surviving workers
    // assert
    for (const [i, name] of names.entries()) {
      await until(`${name} handed off`, async () => HANDED_OFF.has((await phaseOf(s, name)) ?? ''), { problems: s.problems });
      const pods = await launcherPods(s.kube, uids.get(name) ?? '');
      assert.equal(pods.length, 1, `${CRASHES[i]!.name}: launcher pods ${pods.join(', ')}`);
    }
  });
});

describe('VMI slice: scale and API budget', () => {
  let s: Slice;
  before(async () => {
    // VMIs stay Scheduled (virt-handler boots them only after a long while): "create → Scheduled" is measured alone.
    s = await startSlice({ timings: { vmiBootMs: 3_600_000 } });
    await until('relay ready', () => s.rt.relay.ready);
  });
  after(async () => {
    await s.stop();
  });

  test('API calls per VMI, create → Scheduled, within the budget', async () => {
    // arrange
    const N = 10;
    const names = Array.from({ length: N }, (_, i) => `budget-${i}`);
    const counters = s.sandbox.apiServer.counters;
    const before = counters.snapshot().filter((c) => RUNTIME_IDENTITIES.has(c.identity));
    // act
    for (const n of names) await s.kube.create(VMIS, vmiManifest(n));
    await until('all Scheduled', async () => [...(await phases(s.kube, names)).values()].every((p) => p === 'Scheduled'), { problems: s.problems });
    await until('queue idle', () => queueIdle(s));
    const after = counters.snapshot().filter((c) => RUNTIME_IDENTITIES.has(c.identity));
    // assert
    const delta = new Map<string, number>();
    for (const c of after) delta.set(`${c.verb} ${c.resource}`, (delta.get(`${c.verb} ${c.resource}`) ?? 0) + c.count);
    for (const c of before) delta.set(`${c.verb} ${c.resource}`, (delta.get(`${c.verb} ${c.resource}`) ?? 0) - c.count);
    const per = (verbs: string[], resource: string) => verbs.reduce((n, v) => n + (delta.get(`${v} ${resource}`) ?? 0), 0) / N;
    const rows = [...delta].filter(([, n]) => n > 0).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => ({ call: k, total: n, perVmi: +(n / N).toFixed(2) }));
    console.log(`API calls by the runtime (identity runtime: relay + VMI workers) for ${N} VMIs, create → Scheduled:`);
    console.table(rows);
    const vmiWrites = per(['update', 'patch'], 'virtualmachineinstances');
    const podCreates = per(['create'], 'pods');
    const writes = per(['create', 'update', 'patch', 'delete'], 'pods') + vmiWrites;
    // The readiness-gate condition (kubevirt.io/virtual-machine-unpaused) on pods/status: its own line.
    const podStatusPatches = per(['patch'], 'pods/status');
    console.log(`per VMI: ${vmiWrites} VMI writes, ${podCreates} pod creates, ${podStatusPatches} pod status patches (readiness gate)`);
    assert.ok(vmiWrites <= 2, `VMI writes per VMI ${vmiWrites} > 2`);
    assert.equal(podCreates, 1, `pod creates per VMI ${podCreates}`);
    // Pod create, the VMI's two writes, and the pod patch that carries the VMI's kubevirt.io/nodeName
    // label onto it once scheduled (KubeVirt's syncDynamicAnnotationsAndLabelsToPod makes the same one).
    assert.ok(writes <= 4, `controller writes (pods+vmis) per VMI ${writes} > 4; the passes that wrote:\n${await writingPasses(names)}`);
    assert.ok(podStatusPatches <= 1, `readiness-gate patches per launcher pod ${podStatusPatches} > 1: it is written only when it differs`);
  });

  /** Each VMI's passes that wrote, with their cause, attempt and writes (a failed budget says which pass made the extra write). */
  async function writingPasses(names: readonly string[]): Promise<string> {
    const lines: string[] = [];
    for (const n of names) {
      for (const e of await s.rt.state.traces.recent('vmi', `${NS}/${n}`, Date.now())) {
        if (e.writes.length === 0) continue;
        const writes = e.writes.map((w) => `${w.verb} ${w.resource} ${w.code}`).join(', ');
        lines.push(`${n}: ${e.cause.kind} ${e.cause.event} rv ${e.cause.resourceVersion} attempt ${e.attempt} coalesced ${e.coalesced}: ${writes}`);
      }
    }
    return lines.join('\n');
  }

  test('watch dropped and 410 during a burst of 100 VMIs → all 100 handed off', emulatorOnly('drops watches and compacts history (fault injection)'), async () => {
    // arrange
    const names = Array.from({ length: 100 }, (_, i) => `burst-${String(i).padStart(3, '0')}`);
    const api = s.sandbox.apiServer;
    // act
    for (const [i, n] of names.entries()) {
      await s.kube.create(VMIS, vmiManifest(n));
      if (i % 25 === 10) api.faults.dropWatches();
      if (i % 25 === 20) {
        api.control.compactHistory();
        api.faults.dropWatches();
      }
    }
    // assert
    await until(
      'all 100 handed off',
      async () => [...(await phases(s.kube, names)).values()].every((p) => HANDED_OFF.has(p ?? '')),
      { tries: 6000, problems: s.problems },
    );
    const stuck = [...(await phases(s.kube, names))].filter(([, p]) => !HANDED_OFF.has(p ?? ''));
    assert.deepEqual(stuck, []);
    assert.ok(s.rt.metrics.total('relay_watch_restarts_total', { why: 'relist' }) > 7, 'the 410s did not cause relists');
    const pods = (await s.kube.list(PODS, NS, { labelSelector: 'kubevirt.io=virt-launcher' })).items.filter((p) => p.metadata?.name?.startsWith('virt-launcher-burst-'));
    assert.equal(pods.length, 100, `launcher pods for 100 VMIs: ${pods.length}`);
  });
});

// virt-api puts back a VMI status written by anyone but KubeVirt's service accounts (the sandbox
// does too, on both lanes): the VMI controller's status writes go as KubeVirt's controller
// (Impersonate-User, shared/kube/kubevirt-identity.ts), and without that they would not stick.
describe("VMI slice: virt-api's identity rules", () => {
  test('the VMI controller writes VMIs as kubevirt-controller (impersonated), under its own identity, and its status sticks', async () => {
    // arrange
    const s = await startSlice();
    try {
      // act
      await s.kube.create(VMIS, vmiManifest('as-kubevirt'));
      await until('as-kubevirt Running', async () => (await phaseOf(s, 'as-kubevirt')) === 'Running', { problems: s.problems });
      // assert: every committed VMI write of the runtime acted as KubeVirt's controller
      const writes = s.sandbox.apiServer.audit.query({ resource: 'virtualmachineinstances', name: 'as-kubevirt' }).filter((e) => RUNTIME_IDENTITIES.has(e.identity) && e.verb !== 'delete');
      assert.ok(writes.length >= 1, 'the VMI controller wrote the VMI');
      for (const w of writes) assert.equal(w.impersonatedUser, 'system:serviceaccount:kubevirt:kubevirt-controller', `${w.identity} ${w.verb}`);
      const phasesWritten = writes.map((w) => (w.object as unknown as VirtualMachineInstance).status?.phase);
      assert.ok(phasesWritten.includes('Scheduling') || phasesWritten.includes('Scheduled'), `its status writes are the ones stored: ${phasesWritten.join(', ')}`);
    } finally {
      await s.stop();
    }
  });

  test("with impersonation turned off, virt-api's rules put the VMI controller's status writes back: the VMI stays Pending", async () => {
    // arrange
    const s = await startSlice({ runtime: { impersonateKubeVirt: false } });
    try {
      // act: the controller creates the launcher pod and the node side runs it; its status writes do not stick
      const vmi = await s.kube.create(VMIS, vmiManifest('not-kubevirt'));
      await until('the launcher pod is Running', async () => {
        const pods = (await s.kube.list(PODS, NS, { labelSelector: vmiPodsSelector(vmi.metadata?.uid ?? '') })).items;
        return pods.some((p) => p.status?.phase === 'Running');
      });
      // A write whose only change was put back stores nothing (no audit entry): count the requests.
      const vmiWrites = () => [...RUNTIME_IDENTITIES].reduce((n, identity) => n + s.sandbox.apiServer.counters.count({ identity, verb: ['patch', 'update'], resource: 'virtualmachineinstances' }), 0);
      await until('the VMI controller wrote the VMI twice', () => vmiWrites() >= 2);
      // assert
      const got = await s.kube.get(VMIS, NS, 'not-kubevirt');
      assert.equal(got?.status?.phase, 'Pending', "virt-api's mutator put every status of the controller back");
      assert.equal(got?.status?.nodeName, undefined);
    } finally {
      await s.stop();
    }
  });
});
