import assert from 'node:assert/strict';
import { AppsV1Api } from '@kubernetes/client-node';
import { after, before, describe, test } from 'node:test';
import { createClock, type Clock } from '../../../sandbox/clock.ts';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { nodeSideApi } from '../../../sandbox/nodes/api.ts';
import { deploymentIdOf, upgradeKubeVirt } from '../../../sandbox/kubevirt/virt-operator.ts';
import { nextBeatDelayMs } from '../../../sandbox/kubevirt/heartbeat.ts';
import { clients, waitFor } from '../nodes/helpers.ts';

// A frozen clock moved by hand, and a fixed jitter (0.5 → a beat every 96 s): every beat falls
// exactly where the test says.
describe('virt-handler as a DaemonSet, with heartbeats and faults', () => {
  let sb: Sandbox;
  let clock: Clock;
  let api: ReturnType<typeof clients>;
  let apps: AppsV1Api;
  before(async () => {
    clock = createClock({ speed: 0, start: Date.parse('2026-12-01T10:00:00Z') });
    sb = await startSandbox({ nodes: 3, clock, random: () => 0.5, timings: { podStartupMs: 0, kubevirtDeployMs: 10_000 } });
    const kc = sb.apiServer.kubeConfig('test');
    api = clients(kc);
    apps = kc.makeApiClient(AppsV1Api);
  });
  after(async () => {
    await sb.stop();
    clock.dispose();
  });

  const heartbeat = async (node: string) => (await api.core.readNode({ name: node })).metadata?.annotations?.['kubevirt.io/heartbeat'];

  test('one virt-handler pod per node in kubevirt, and the DaemonSet counts them ready', async () => {
    const pods = await waitFor('3 handler pods Running', async () => {
      const l = await api.core.listNamespacedPod({ namespace: 'kubevirt', labelSelector: 'kubevirt.io=virt-handler' });
      return l.items.length === 3 && l.items.every((p) => p.status?.phase === 'Running') && l.items;
    });
    assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), ['node01', 'node02', 'node03']);
    const ds = await waitFor('DaemonSet status', async () => {
      const d = await apps.readNamespacedDaemonSet({ namespace: 'kubevirt', name: 'virt-handler' });
      return d.status?.numberReady === 3 && d;
    });
    assert.equal(ds.metadata?.labels?.['kubevirt.io'], 'virt-handler', 'the node controller lists DaemonSets by this label');
    assert.deepEqual([ds.status?.desiredNumberScheduled, ds.status?.currentNumberScheduled], [3, 3]);
  });

  test('every node beats once a minute (jittered); a stopped virt-handler stops beating', async () => {
    // arrange
    const before01 = await heartbeat('node01');
    sb.virtHandlers.stopHandler('node02');
    const before02 = await heartbeat('node02');
    // act: two beats' worth of time
    clock.advance(2 * nextBeatDelayMs(0.5) + 1000);
    // assert
    const after01 = await waitFor('node01 beat', async () => {
      const h = await heartbeat('node01');
      return h !== before01 && h;
    });
    assert.ok(Date.parse(after01) >= Date.parse(before01!) + 60_000, `the beat carries the sandbox time: ${before01} → ${after01}`);
    const node01 = await api.core.readNode({ name: 'node01' });
    assert.equal(node01.metadata?.labels?.['kubevirt.io/schedulable'], 'true');
    assert.equal(await heartbeat('node02'), before02, 'node02 (stopped) kept its old heartbeat');
    // act: the handler comes back
    await sb.virtHandlers.startHandler('node02');
    assert.notEqual(await heartbeat('node02'), before02, 'a restarted handler beats at once');
  });

  test('a deleted node takes its pods with it; the DaemonSet desires one fewer', async () => {
    // act
    await sb.deleteNode('node03');
    // assert
    await assert.rejects(api.core.readNode({ name: 'node03' }), (e: { code?: number }) => e.code === 404);
    const onNode = await api.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node03' });
    assert.equal(onNode.items.length, 0, 'no pod is left bound to the deleted node');
    await waitFor('DaemonSet desires 2', async () => (await apps.readNamespacedDaemonSet({ namespace: 'kubevirt', name: 'virt-handler' })).status?.desiredNumberScheduled === 2);
  });

  test('an upgrade (new imageTag) goes Deploying with a new target deployment id, then Deployed', async () => {
    type Kv = { status?: { phase?: string; observedDeploymentID?: string; targetDeploymentID?: string; observedKubeVirtVersion?: string } };
    const read = async () => (await api.custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'kubevirts', namespace: 'kubevirt', name: 'kubevirt' })) as Kv;
    const installed = await waitFor('install recorded', async () => {
      const kv = await read();
      return !!kv.status?.observedDeploymentID && kv;
    });
    assert.equal(installed.status?.targetDeploymentID, installed.status?.observedDeploymentID);
    // act
    await upgradeKubeVirt(nodeSideApi(sb.apiServer.kubeConfig('test')), { imageTag: 'v1.9.1' });
    // assert
    const deploying = await waitFor('Deploying', async () => {
      const kv = await read();
      return kv.status?.phase === 'Deploying' && kv;
    });
    assert.equal(deploying.status?.targetDeploymentID, deploymentIdOf({ registry: 'quay.io/kubevirt', tag: 'v1.9.1' }));
    assert.equal(deploying.status?.observedDeploymentID, installed.status?.observedDeploymentID, 'observed stays on the old install while rolling out');
    clock.advance(10_000);
    const deployed = await waitFor('Deployed', async () => {
      const kv = await read();
      return kv.status?.phase === 'Deployed' && kv;
    });
    assert.equal(deployed.status?.observedDeploymentID, deploying.status?.targetDeploymentID);
    assert.equal(deployed.status?.observedKubeVirtVersion, 'v1.9.1');
  });
});
