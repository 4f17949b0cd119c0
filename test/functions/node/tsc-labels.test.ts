/**
 * The node topology updater (functions/node/tsc-labels.ts, topology-updater.ts): which
 * `scheduling.node.kubevirt.io/tsc-frequency-<Hz>` labels a node offers, as KubeVirt's
 * `CalculateTSCLabelDiff` computes them, and the node pass that writes them against the sandbox
 * API server.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeVirt } from '../../../shared/api/index.ts';
import { NODES, VMIS } from '../../../shared/api/resources.ts';
import { reconcileNode } from '../../../functions/node/reconcile.ts';
import { nodeTsc, tscLabelDiff, tscLabelPatch } from '../../../functions/node/tsc-labels.ts';
import { frequencyMemo, REQUIRED_FREQUENCIES_TTL_MS } from '../../../functions/node/topology-updater.ts';
import { nodeController } from '../../../functions/node/controller.ts';
import { actions, createVmi, harness, NOW } from './support.ts';

const SCHED = 'scheduling.node.kubevirt.io/tsc-frequency-';
const GHZ = 1_000_000_000;
const TOL = 250_000; // 250 ppm of 1 GHz

const node = (labels: Record<string, string>): V1Node => ({ metadata: { name: 'n1', labels } });
const sorted = (a: readonly number[]) => [...a].sort((x, y) => x - y);

describe('tscLabelDiff: the frequencies a node offers', () => {
  const cases: { name: string; required: number[]; onNode: number[]; scalable: boolean; add: number[]; remove: number[] }[] = [
    { name: 'non-scalable: only its own frequency', required: [GHZ / 2, 2 * GHZ], onNode: [], scalable: false, add: [GHZ], remove: [] },
    { name: 'non-scalable: a frequency within 250 ppm is offered', required: [GHZ + TOL], onNode: [], scalable: false, add: [GHZ + TOL, GHZ], remove: [] },
    { name: 'non-scalable: one just past the tolerance is not', required: [GHZ + TOL + 1, GHZ - TOL - 1], onNode: [], scalable: false, add: [GHZ], remove: [] },
    { name: 'scalable: lower frequencies and its own', required: [GHZ / 2, GHZ / 4], onNode: [], scalable: true, add: [GHZ / 4, GHZ / 2, GHZ], remove: [] },
    { name: 'scalable: higher only within the tolerance', required: [GHZ + TOL, GHZ + TOL + 1], onNode: [], scalable: true, add: [GHZ, GHZ + TOL], remove: [] },
    { name: 'a frequency no longer in use is removed', required: [], onNode: [GHZ, GHZ / 2], scalable: true, add: [GHZ], remove: [GHZ / 2] },
    { name: 'a lowest of 0 (no schedulable node reports one) is offered by a scalable node', required: [0], onNode: [], scalable: true, add: [0, GHZ], remove: [] },
    { name: 'and not by a non-scalable one', required: [0], onNode: [0], scalable: false, add: [GHZ], remove: [0] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange / act
      const diff = tscLabelDiff(c.required, c.onNode, GHZ, c.scalable);
      // assert
      assert.deepEqual(sorted(diff.add), sorted(c.add), 'frequencies added');
      assert.deepEqual(sorted(diff.remove), sorted(c.remove), 'frequencies removed');
    });
  }
});

describe('nodeTsc and tscLabelPatch', () => {
  const tscCases: [string, Record<string, string>, ReturnType<typeof nodeTsc>][] = [
    ['no frequency label → 0', {}, { hz: 0 }],
    ['a frequency, scalable', { 'cpu-timer.node.kubevirt.io/tsc-frequency': '2400000000', 'cpu-timer.node.kubevirt.io/tsc-scalable': 'true' }, { hz: 2_400_000_000, scalable: true }],
    ['scalable only when the label reads "true"', { 'cpu-timer.node.kubevirt.io/tsc-frequency': '5', 'cpu-timer.node.kubevirt.io/tsc-scalable': 'yes' }, { hz: 5, scalable: false }],
    ['not an int', { 'cpu-timer.node.kubevirt.io/tsc-frequency': '2.4GHz' }, { error: 'tsc frequency on node n1 is not an int: "2.4GHz"' }],
    ['not positive', { 'cpu-timer.node.kubevirt.io/tsc-frequency': '0' }, { error: 'tsc frequency on node n1 is invalid: expected a frequenchy bigger than 0, but got 0' }],
  ];
  for (const [name, labels, want] of tscCases) {
    test(`nodeTsc: ${name}`, () => {
      // arrange / act / assert
      assert.deepEqual(nodeTsc(node(labels)), want);
    });
  }

  test('the patch adds what is missing, removes what is stale, and keeps an unparsable label', () => {
    // arrange
    const n = node({ [`${SCHED}${GHZ}`]: 'true', [`${SCHED}7`]: 'true', [`${SCHED}abc`]: 'true' });
    // act
    const body = tscLabelPatch(n, GHZ, true, [GHZ / 2]);
    // assert
    assert.deepEqual(body, { metadata: { labels: { [`${SCHED}${GHZ / 2}`]: 'true', [`${SCHED}7`]: null } } });
  });

  test('no patch when the labels are already right', () => {
    // arrange
    const n = node({ [`${SCHED}${GHZ}`]: 'true', [`${SCHED}${GHZ / 2}`]: 'true' });
    // act / assert
    assert.equal(tscLabelPatch(n, GHZ, true, [GHZ / 2]), undefined);
  });
});

describe('the node pass labels TSC frequencies (sandbox API server)', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ port: 0 });
  });
  afterEach(async () => server.close());

  async function tscNode(kube: ReturnType<typeof harness>['kube'], name: string, hz: number, scalable: boolean, extra: Record<string, string> = {}): Promise<void> {
    const heartbeat = new Date(NOW).toISOString().replace(/\.\d+Z$/, 'Z');
    const labels = { 'kubevirt.io/schedulable': 'true', 'cpu-timer.node.kubevirt.io/tsc-frequency': String(hz), 'cpu-timer.node.kubevirt.io/tsc-scalable': String(scalable), ...extra };
    await kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels, annotations: { 'kubevirt.io/heartbeat': heartbeat } } } as V1Node);
  }
  const offered = async (kube: ReturnType<typeof harness>['kube'], name: string) =>
    Object.keys((await kube.get(NODES, undefined, name))?.metadata?.labels ?? {}).filter((k) => k.startsWith(SCHED)).sort();

  test('the lowest frequency and those in use, per node as it can run them', async () => {
    // arrange: fast (scalable) 3 GHz, slow 2 GHz, fixed 2.4 GHz; a VMI pinned to 2.4 GHz
    const h = harness(server);
    await tscNode(h.kube, 'fast', 3 * GHZ, true);
    await tscNode(h.kube, 'slow', 2 * GHZ, false);
    await tscNode(h.kube, 'fixed', 2.4 * GHZ, false, { [`${SCHED}1`]: 'true' });
    const vmi = await createVmi(h.kube, 'pinned', 'fixed', 'Running');
    await h.kube.patch(VMIS, 'default', vmi.metadata?.name ?? '', { type: 'merge', body: { status: { topologyHints: { tscFrequency: 2.4 * GHZ } } } });
    // act
    for (const n of ['fast', 'slow', 'fixed']) await reconcileNode(n, h.deps);
    // assert
    assert.deepEqual(await offered(h.kube, 'fast'), [`${SCHED}2000000000`, `${SCHED}2400000000`, `${SCHED}3000000000`]);
    assert.deepEqual(await offered(h.kube, 'slow'), [`${SCHED}2000000000`]);
    assert.deepEqual(await offered(h.kube, 'fixed'), [`${SCHED}2400000000`], 'the stale 1 Hz label is removed');
  });

  test('a second pass writes nothing', async () => {
    // arrange
    const h = harness(server);
    await tscNode(h.kube, 'fast', 3 * GHZ, true);
    await reconcileNode('fast', h.deps);
    const before = actions(server).filter((a) => a.startsWith('patch')).length;
    // act
    await reconcileNode('fast', h.deps);
    // assert
    assert.equal(actions(server).filter((a) => a.startsWith('patch')).length, before, 'no patch when nothing changed');
  });

  test("the KubeVirt CR's minimumClusterTSCFrequency is the lowest; one not > 0 skips the update", async () => {
    // arrange
    const kv = (hz: number) => ({ apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { developerConfiguration: { minimumClusterTSCFrequency: hz } } } }) as KubeVirt;
    const configured = harness(server, kv(GHZ));
    await tscNode(configured.kube, 'fast', 3 * GHZ, true);
    // act
    await reconcileNode('fast', configured.deps);
    // assert
    assert.deepEqual(await offered(configured.kube, 'fast'), [`${SCHED}1000000000`, `${SCHED}3000000000`]);
    // act: a bad minimum
    const warnings: string[] = [];
    const bad = harness(server, kv(0));
    await reconcileNode('fast', { ...bad.deps, log: { info: () => undefined, warn: (m: string, f?: Record<string, unknown>) => void warnings.push(`${m}: ${String(f?.['error'])}`) } });
    // assert
    assert.deepEqual(await offered(configured.kube, 'fast'), [`${SCHED}1000000000`, `${SCHED}3000000000`], 'labels left as they were');
    assert.match(warnings.join('\n'), /Skipping TSC frequency updates on all nodes: .*minimumClusterTSCFrequency must be greater 0, but got 0/);
  });

  test('a node reporting no frequency costs no list', async () => {
    // arrange
    const h = harness(server);
    await h.kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'plain', labels: { 'kubevirt.io/schedulable': 'true' } } } as V1Node);
    const listed: string[] = [];
    const kube = { ...h.deps.kube, list: ((res, ns, opts) => (listed.push(res.plural), h.deps.kube.list(res, ns, opts))) as typeof h.deps.kube.list };
    // act
    await reconcileNode('plain', { ...h.deps, kube });
    // assert
    assert.deepEqual(listed, [], 'no list for a node without a TSC frequency');
  });

  test("every node's pass within KubeVirt's 30 s loop shares one reading of the VMIs and nodes; the next one reads again, and a failed reading is not kept", async () => {
    // arrange
    const h = harness(server);
    for (const [n, hz] of [['fast', 3 * GHZ], ['slow', 2 * GHZ], ['fixed', 2.4 * GHZ]] as const) await tscNode(h.kube, n, hz, hz === 3 * GHZ);
    const listed: string[] = [];
    let failLists = 0;
    const kube = {
      ...h.deps.kube,
      list: ((res, ns, opts) => {
        listed.push(res.plural);
        if (failLists > 0) return failLists--, Promise.reject(new Error('connection reset'));
        return h.deps.kube.list(res, ns, opts);
      }) as typeof h.deps.kube.list,
    };
    const deps = { ...h.deps, kube, frequencies: frequencyMemo() };
    // act: three nodes' passes, two of them at once
    await Promise.all([reconcileNode('fast', deps), reconcileNode('slow', deps)]);
    await reconcileNode('fixed', deps);
    // assert
    assert.deepEqual(listed, ['virtualmachineinstances', 'nodes'], 'one reading for the three passes');
    assert.deepEqual(await offered(h.kube, 'fast'), [`${SCHED}2000000000`, `${SCHED}3000000000`]);
    assert.deepEqual(await offered(h.kube, 'slow'), [`${SCHED}2000000000`]);
    // act: a VMI's hint, read once the loop's period is over
    const vmi = await createVmi(h.kube, 'hinted', 'fast', 'Running');
    await h.kube.patch(VMIS, 'default', vmi.metadata?.name ?? '', { type: 'merge', body: { status: { topologyHints: { tscFrequency: 2.4 * GHZ } } } });
    h.advance(REQUIRED_FREQUENCIES_TTL_MS - 1);
    await reconcileNode('fast', deps);
    assert.equal(listed.length, 2, 'still within the period');
    h.advance(1);
    await reconcileNode('fast', deps);
    // assert
    assert.equal(listed.length, 4, 'read again after the period');
    assert.ok((await offered(h.kube, 'fast')).includes(`${SCHED}2400000000`), 'the new frequency in use is offered');
    // act: a failed reading, then a pass in the same period
    h.advance(REQUIRED_FREQUENCIES_TTL_MS);
    failLists = 1;
    await assert.rejects(reconcileNode('slow', deps), /connection reset/);
    await reconcileNode('slow', deps);
    // assert
    assert.deepEqual(listed.slice(4), ['virtualmachineinstances', 'virtualmachineinstances', 'nodes'], 'the failure is read again, not kept');
  });

  test("the registry's node controller gives each runtime one memo, shared by its passes", () => {
    const ctx = { kube: {} } as never;
    const make = nodeController.deps(ctx);
    const a = make({} as never) as { frequencies?: unknown };
    const b = make({} as never) as { frequencies?: unknown };
    assert.ok(a.frequencies !== undefined && a.frequencies === b.frequencies);
    assert.notEqual((nodeController.deps(ctx)({} as never) as { frequencies?: unknown }).frequencies, a.frequencies, 'another runtime, another memo');
  });
});
