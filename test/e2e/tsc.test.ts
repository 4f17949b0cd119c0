/**
 * TSC-frequency topology hints end to end (KubeVirt's topology hinter; shared/topology/hints.ts):
 * a Hyper-V re-enlightenment VMI gets `status.topologyHints.tscFrequency` — the lowest frequency
 * the schedulable nodes report — before its launcher pod, which is pinned to the nodes labelled
 * for that frequency; virt-handler then finds it `LiveMigratable` and it migrates. On a cluster
 * whose nodes report no TSC frequency the hint is 0: the VMI runs but is
 * `NoTSCFrequencyNotLiveMigratable`, and virt-api refuses its migration with that reason. With
 * nodes at different frequencies the node controller's topology updater (functions/node/
 * topology-updater.ts) labels each for the frequencies it can run, and the VMI lands and migrates
 * only there.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { MIGRATIONS, NODES, VMIS } from '../../shared/api/resources.ts';
import { launcherPods, NS, startSlice, until, vmiManifest, type Slice } from './support.ts';
import { PODS } from '../../shared/api/resources.ts';

const TSC = 'cpu-timer.node.kubevirt.io/tsc-frequency';
const HZ = 2400000000;
const NO_TSC_MESSAGE = 'HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent';

const reenlightened = (name: string): VirtualMachineInstance => {
  const v = vmiManifest(name);
  v.spec.domain.features = { hyperv: { reenlightenment: { enabled: true } } } as never;
  return v;
};
const liveMigratable = (v: VirtualMachineInstance | undefined) => v?.status?.conditions?.find((c) => c.type === 'LiveMigratable');

async function runningWithMigratability(s: Slice, name: string): Promise<VirtualMachineInstance> {
  await until(`${name} Running with LiveMigratable`, async () => {
    const v = await s.kube.get(VMIS, NS, name);
    return v?.status?.phase === 'Running' && liveMigratable(v) !== undefined;
  }, { problems: s.problems });
  return (await s.kube.get(VMIS, NS, name))!;
}

describe('a Hyper-V re-enlightenment VMI on nodes reporting a TSC frequency', () => {
  let s: Slice;
  after(async () => s?.stop());

  test('its hint before the pod, the pod pinned to the frequency, LiveMigratable, and it migrates', async () => {
    // arrange
    s = await startSlice({ nodes: 2 });
    // act
    await s.kube.create(VMIS, reenlightened('tsc-a'));
    // assert
    const v = await runningWithMigratability(s, 'tsc-a');
    assert.equal(v.status?.topologyHints?.tscFrequency, HZ);
    const [podName] = await launcherPods(s.kube, v.metadata?.uid ?? '');
    const pod = await s.kube.get(PODS, NS, podName ?? '');
    assert.equal(pod?.spec?.nodeSelector?.[`scheduling.node.kubevirt.io/tsc-frequency-${HZ}`], 'true', 'pinned to the frequency');
    assert.equal(liveMigratable(v)?.status, 'True');
    // act: a migration
    await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'tsc-a-mig', namespace: NS }, spec: { vmiName: 'tsc-a' } });
    // assert
    await until('the migration Succeeded', async () => (await s.kube.get(MIGRATIONS, NS, 'tsc-a-mig'))?.status?.phase === 'Succeeded', { problems: s.problems });
    assert.notEqual((await s.kube.get(VMIS, NS, 'tsc-a'))?.status?.nodeName, v.status?.nodeName);
  });
});

describe('the same VMI where no node reports a TSC frequency', () => {
  let s: Slice;
  after(async () => s?.stop());

  test('hint 0: it runs, NoTSCFrequencyNotLiveMigratable, and virt-api refuses its migration', async () => {
    // arrange
    s = await startSlice({ nodes: 2, nodeShapes: { node01: { labels: { [TSC]: null } }, node02: { labels: { [TSC]: null } } } });
    // act
    await s.kube.create(VMIS, reenlightened('tsc-b'));
    // assert
    const v = await runningWithMigratability(s, 'tsc-b');
    assert.equal(v.status?.topologyHints?.tscFrequency, 0);
    const live = liveMigratable(v);
    assert.deepEqual([live?.status, live?.reason, live?.message], ['False', 'NoTSCFrequencyNotLiveMigratable', NO_TSC_MESSAGE]);
    const refused = await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'tsc-b-mig', namespace: NS }, spec: { vmiName: 'tsc-b' } }).then(() => undefined, (e: unknown) => e as Error);
    assert.match(refused?.message ?? '', /Cannot migrate VMI, Reason: NoTSCFrequencyNotLiveMigratable/);
  });
});

describe('nodes with different TSC frequencies (the node topology updater)', () => {
  let s: Slice;
  after(async () => s?.stop());

  const SCHED = 'scheduling.node.kubevirt.io/tsc-frequency-';
  const offered = async (node: string) =>
    Object.keys((await s.kube.get(NODES, undefined, node))?.metadata?.labels ?? {}).filter((k) => k.startsWith(SCHED)).sort();

  test('each node offers what it can run; the VMI runs and migrates only where its frequency is offered', async () => {
    // arrange: node01 fixed at 2.4 GHz, node02 fixed at 2 GHz (the lowest), node03 scaling from 3 GHz
    const shape = (hz: number, scalable: boolean) => ({ labels: { [TSC]: String(hz), 'cpu-timer.node.kubevirt.io/tsc-scalable': String(scalable) } });
    s = await startSlice({ nodes: 3, nodeShapes: { node01: shape(2_400_000_000, false), node02: shape(2_000_000_000, false), node03: shape(3_000_000_000, true) } });
    // assert: the lowest frequency is offered by the nodes that can run it, each node its own
    await until('the nodes labelled for the frequencies they can run', async () =>
      JSON.stringify([await offered('node01'), await offered('node02'), await offered('node03')]) ===
      JSON.stringify([[`${SCHED}2400000000`], [`${SCHED}2000000000`], [`${SCHED}2000000000`, `${SCHED}3000000000`]]), { problems: s.problems });
    // act
    await s.kube.create(VMIS, reenlightened('tsc-c'));
    // assert: pinned to the lowest frequency, so never on node01
    const v = await runningWithMigratability(s, 'tsc-c');
    assert.equal(v.status?.topologyHints?.tscFrequency, 2_000_000_000);
    const source = v.status?.nodeName ?? '';
    assert.ok(['node02', 'node03'].includes(source), `runs where 2 GHz is offered, not on ${source}`);
    assert.equal(liveMigratable(v)?.status, 'True');
    // act: a migration
    await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'tsc-c-mig', namespace: NS }, spec: { vmiName: 'tsc-c' } });
    // assert: the only other node offering 2 GHz
    await until('the migration Succeeded', async () => (await s.kube.get(MIGRATIONS, NS, 'tsc-c-mig'))?.status?.phase === 'Succeeded', { problems: s.problems });
    assert.equal((await s.kube.get(VMIS, NS, 'tsc-c'))?.status?.nodeName, source === 'node02' ? 'node03' : 'node02');
  });
});
