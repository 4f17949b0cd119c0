import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { clients, createVmi, getPod, getVmi, launcherPod, patchVmi, waitFor } from './helpers.ts';
import type { MigrationState, Pod } from '../../../sandbox/nodes/objects.ts';

const ANTI_AFFINITY = (vmiUid: string) => ({
  affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': vmiUid } }, topologyKey: 'kubernetes.io/hostname' }] } },
});

// Plays the controllers' part by hand: hand-off (Scheduled + nodeName) and migration hand-off
// (migrationState + kubevirt.io/migrationTargetNodeName label), as reference §a.4 and §d.4 describe.
describe('virt-handler (hand-offs made by hand)', () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  before(async () => {
    sb = await startSandbox({ nodes: 2, speed: 1000 });
    api = clients(sb.apiServer.kubeConfig('test'));
  });
  after(async () => sb.stop());

  async function runningLauncher(vmi: { name: string; uid: string }, extra = {}, labels: Record<string, string> = {}) {
    const created = await api.core.createNamespacedPod({ namespace: 'default', body: launcherPod(vmi, extra, labels) });
    return waitFor('launcher Running', async () => {
      const p = await getPod(api.core, created.metadata!.name!);
      return p?.status?.phase === 'Running' && p;
    });
  }

  async function handOff(name: string, pod: Pod) {
    // One write, as virt-controller does it: the VMI has no /status subresource. activePods is how
    // virt-handler finds the launcher.
    const nodeName = pod.spec!.nodeName!;
    await patchVmi(api.custom, name, { status: { phase: 'Scheduled', nodeName, activePods: { [pod.metadata!.uid!]: nodeName } }, metadata: { labels: { 'kubevirt.io/nodeName': nodeName } } });
    return waitFor('VMI Running', async () => {
      const v = await getVmi(api.custom, name);
      return v.status?.phase === 'Running' && v;
    });
  }

  async function migrate(name: string, vmiUid: string, migrationUid: string, sourcePod: string) {
    const vmi = await getVmi(api.custom, name);
    const sourceNode = vmi.status!.nodeName!;
    const target = await runningLauncher({ name, uid: vmiUid }, ANTI_AFFINITY(vmiUid), { 'kubevirt.io/migrationJobUID': migrationUid });
    const targetNode = target.spec!.nodeName!;
    const state: MigrationState = { migrationUid, sourceNode, targetNode, targetPod: target.metadata!.name!, sourcePod };
    await patchVmi(api.custom, name, { status: { migrationState: state }, metadata: { labels: { 'kubevirt.io/migrationTargetNodeName': targetNode } } });
    const done = await waitFor('migration finished', async () => {
      const v = await getVmi(api.custom, name);
      return v.status?.migrationState?.completed === true && !v.metadata?.labels?.['kubevirt.io/migrationTargetNodeName'] && v;
    });
    return { done, sourceNode, targetNode, targetPod: target.metadata!.name! };
  }

  test('a handed-off VMI goes Scheduled → Running with the fields the controllers read', async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-boot');
    const pod = await runningLauncher(vmi);
    // act
    const running = await handOff('vmi-boot', pod);
    // assert
    const st = running.status as Record<string, unknown>;
    assert.equal(st.nodeName, pod.spec!.nodeName, 'stays on the launcher node');
    assert.equal(st.migrationMethod, 'BlockMigration', 'containerDisk lives on the node');
    assert.equal(st.selinuxContext, 'none');
    assert.deepEqual((st.interfaces as { ipAddress?: string }[])[0]?.ipAddress, pod.status!.podIP);
    assert.equal(running.status?.conditions?.find((c) => c.type === 'LiveMigratable')?.status, 'True');
    assert.ok(st.guestOSInfo, 'guestOSInfo reported');
    // Written as Go marshals KubeVirt's conditions (virt-handler's Update): both times always there,
    // null when unset; KubeVirt's virt-controller tests the list as it marshals it in its patches.
    for (const c of running.status?.conditions ?? []) assert.deepEqual(['lastProbeTime' in c, 'lastTransitionTime' in c], [true, true], `${c.type}: ${JSON.stringify(c)}`);
    assert.equal(running.status?.conditions?.find((c) => c.type === 'LiveMigratable')?.lastProbeTime, null);
  });

  test('a migration hand-off completes: migrationState filled, nodeName moves, source pod completes', async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-mig');
    const source = await runningLauncher(vmi);
    await handOff('vmi-mig', source);
    // act
    const { done, sourceNode, targetNode } = await migrate('vmi-mig', vmi.uid, 'mig-1', source.metadata!.name!);
    // assert
    assert.notEqual(targetNode, sourceNode, 'anti-affinity put the target elsewhere');
    const ms = done.status!.migrationState!;
    assert.equal(ms.failed, undefined);
    assert.equal(ms.targetNodeAddress, '192.168.66.10' + targetNode.slice(-1));
    assert.ok(ms.startTimestamp && ms.endTimestamp, 'start and end recorded');
    assert.equal(ms.targetNodeDomainDetected, true);
    assert.equal(ms.sourceNode, sourceNode);
    assert.equal(done.status!.nodeName, targetNode, 'VMI now on the target');
    assert.equal(done.metadata!.labels!['kubevirt.io/nodeName'], targetNode);
    await waitFor('source launcher Succeeded', async () => (await getPod(api.core, source.metadata!.name!))?.status?.phase === 'Succeeded');
  });

  test('a migration told to fail ends failed and leaves the VMI on its source', async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-fail');
    const source = await runningLauncher(vmi);
    await handOff('vmi-fail', source);
    sb.virtHandler.failMigration('default', 'vmi-fail', 'injected failure');
    // act
    const { done, sourceNode, targetPod } = await migrate('vmi-fail', vmi.uid, 'mig-2', source.metadata!.name!);
    // assert
    const ms = done.status!.migrationState!;
    assert.equal(ms.failed, true);
    assert.equal(ms.failureReason, 'injected failure');
    assert.equal(done.status!.nodeName, sourceNode, 'still on the source');
    await waitFor('target launcher completed', async () => (await getPod(api.core, targetPod))?.status?.phase === 'Succeeded');
    assert.equal((await getPod(api.core, source.metadata!.name!))?.status?.phase, 'Running', 'source keeps running');
  });

  test('components survive dropped watches and failing requests', async () => {
    // arrange: every open watch ends, the next re-watches and lists of node-sim fail with 500
    const restartsBefore = sb.scheduler.restarts() + sb.kubelet.restarts() + sb.virtHandler.restarts();
    sb.apiServer.faults.failNext(500, 6, { identity: 'node-sim', verb: 'watch' });
    sb.apiServer.faults.failNext(500, 2, { identity: 'node-sim', verb: 'list' });
    sb.apiServer.faults.dropWatches();
    sb.apiServer.control.compactHistory();
    // act: new work after the disruption
    const vmi = await createVmi(api.custom, 'vmi-after-drop');
    const pod = await runningLauncher(vmi);
    await handOff('vmi-after-drop', pod);
    // assert
    const restarts = sb.scheduler.restarts() + sb.kubelet.restarts() + sb.virtHandler.restarts();
    assert.ok(restarts > restartsBefore, `informers were restarted after errors (${restartsBefore} → ${restarts})`);
    assert.equal(sb.apiServer.faults.remaining(), 0, 'every injected failure was hit');
  });
});

describe('virt-handler: a launcher that dies before the domain boots', () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  before(async () => {
    // The guest never finishes booting: the VMI stays Scheduled until its launcher ends.
    sb = await startSandbox({ nodes: 1, speed: 1000, timings: { vmiBootMs: 24 * 3_600_000 } });
    api = clients(sb.apiServer.kubeConfig('test'));
  });
  after(async () => sb.stop());

  test('a handed-off (Scheduled) VMI whose launcher pod fails → Failed (the launcher is unresponsive), Warning Stopped, never Running', async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-early-crash');
    const created = await api.core.createNamespacedPod({ namespace: 'default', body: launcherPod(vmi) });
    const pod = await waitFor('launcher Running', async () => {
      const p = await getPod(api.core, created.metadata!.name!);
      return p?.status?.phase === 'Running' && p;
    });
    await patchVmi(api.custom, 'vmi-early-crash', { status: { phase: 'Scheduled', nodeName: pod.spec!.nodeName!, activePods: { [pod.metadata!.uid!]: pod.spec!.nodeName! } }, metadata: { labels: { 'kubevirt.io/nodeName': pod.spec!.nodeName! } } });
    // act
    await sb.kubelet.finishPod('default', pod.metadata!.name!, 'Failed');
    // assert
    const failed = await waitFor('VMI Failed', async () => {
      const v = await getVmi(api.custom, 'vmi-early-crash');
      return v.status?.phase === 'Failed' && v;
    });
    const status = failed.status as { phaseTransitionTimestamps?: { phase?: string }[] };
    assert.ok(!status.phaseTransitionTimestamps?.some((t) => t.phase === 'Running'), 'the VMI never ran');
    const events = await waitFor('Warning Stopped', async () => {
      const list = await api.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=vmi-early-crash' });
      return list.items.some((e) => e.reason === 'Stopped') && list.items;
    });
    const stopped = events.find((e) => e.reason === 'Stopped')!;
    assert.deepEqual([stopped.type, stopped.message, stopped.source?.component], ['Warning', 'The VirtualMachineInstance crashed.', 'virt-handler']);
  });
});
