/**
 * The differential test (docs/fidelity.md): every case of the corpus through the product's VMI
 * controller on the sandbox — its objects and KubeVirt's defaulted VMI created in a namespace of
 * its own, the local runtime reconciling — and the launcher pod it creates compared field by
 * field with the one KubeVirt's own template service rendered for the same inputs
 * (kubevirt-pod.json), or its refusal with KubeVirt's. One sandbox and one runtime for every case;
 * cases that set the KubeVirt CR run in groups of equal settings, one group at a time.
 *
 * Both lanes: `npm test` (the emulator) and `npm run test:real` (VR_CONTROL_PLANE=real).
 * `DIFFERENTIAL_REPORT=<file>` writes every case's result as JSON (for docs/fidelity.md).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirt, VirtualMachineInstance } from '../../shared/api/index.ts';
import { KUBEVIRTS } from '../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { applyVmiDefaults } from '../../shared/template/vmi-defaults.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import { newRuntime } from '../e2e/support.ts';
import { applyObjects, awaitProduct, createVmi, dryRunPod, setKubeVirt, settingsKey, type KubeVirtSettings, type ProductOutcome } from './apply-case.ts';
import { kubevirtCr, loadCorpus, ORACLE_VMI_UID, type DifferentialCase } from './corpus.ts';
import { EXPECTED_DIFFERENCES } from './expected-differences.ts';
import { diffPods, formatDifferences, substituteUids, type Difference } from './pod-diff.ts';

/** Cases reconciled at once within a group of equal KubeVirt settings. */
const CONCURRENCY = 16;
/** How long a case may take to get its launcher pod (or refusal) once its VMI exists. */
const CASE_TIMEOUT_MS = 15_000;

interface CaseResult {
  readonly name: string;
  readonly description: string;
  readonly kubevirt: 'pod' | 'error';
  readonly ours: ProductOutcome['kind'];
  readonly differences: readonly Difference[];
  /** Things worth knowing that are not differences (both refused, with their messages; objects this server does not serve). */
  readonly notes: readonly string[];
}

const corpus = loadCorpus();
const results = new Map<string, CaseResult>();
const real = process.env.VR_CONTROL_PLANE === 'real';

function settingsOf(c: DifferentialCase): KubeVirtSettings | undefined {
  const cr = kubevirtCr(c);
  return cr ? { spec: (cr.spec ?? {}) as KubeVirt['spec'], annotations: cr.metadata.annotations ?? {} } : undefined;
}

/**
 * The VMI to create: KubeVirt's defaulted one; where KubeVirt refused to render it wrote none,
 * and the VMI as written gets the project's reproduction of virt-api's defaults instead (only
 * the outcome, pod or refusal, is compared for those).
 */
function vmiToCreate(c: DifferentialCase): VirtualMachineInstance {
  if (c.kubevirt.kind === 'pod') return c.kubevirt.vmi;
  const cr = kubevirtCr(c);
  return applyVmiDefaults(c.vmi, clusterConfigFromKubeVirt(cr as KubeVirt | undefined));
}

const describeOutcome = (o: ProductOutcome) => (o.kind === 'pod' ? 'a launcher pod' : o.kind === 'refused' ? `refused (${o.reason}: ${o.message})` : `neither a pod nor a refusal within ${CASE_TIMEOUT_MS / 1000} s`);

async function runCase(c: DifferentialCase, kube: KubeClient, sandbox: Sandbox): Promise<CaseResult> {
  const applied = await applyObjects(kube, c, real);
  const vmi = await createVmi(kube, vmiToCreate(c));
  const uid = vmi.metadata?.uid ?? '';
  const ours = await awaitProduct(kube, c.namespace, vmi.metadata?.name ?? '', uid, CASE_TIMEOUT_MS);
  const notes = [...applied.skipped];
  const base = { name: c.name, description: c.description, kubevirt: c.kubevirt.kind, ours: ours.kind };
  if (c.kubevirt.kind === 'error') {
    if (ours.kind === 'refused') return { ...base, differences: [], notes: [...notes, `both refuse: KubeVirt "${c.kubevirt.message}"; ours ${ours.reason}: "${ours.message}"`] };
    return { ...base, differences: [{ path: '(outcome)', ours: describeOutcome(ours), kubevirt: `refused: ${c.kubevirt.message}` }], notes };
  }
  if (ours.kind !== 'pod') return { ...base, differences: [{ path: '(outcome)', ours: describeOutcome(ours), kubevirt: 'a launcher pod' }], notes };
  // KubeVirt's pod through the same API server (dry run): the server's defaults on both sides.
  const uids = new Map(applied.uids);
  uids.set(ORACLE_VMI_UID, uid);
  let theirs: V1Pod;
  try {
    theirs = await dryRunPod(sandbox.apiServer.kubeConfig('test'), c.namespace, substituteUids(c.kubevirt.pod, uids));
  } catch (err) {
    return { ...base, differences: [{ path: '(kubevirt-pod)', ours: 'created', kubevirt: `refused by this API server: ${(err as Error).message.slice(0, 300)}` }], notes };
  }
  // Paths and values name the case's own UIDs again (a persistent-reservation label carries a
  // claim's UID), so that a difference reads the same on every run.
  const back = new Map([...uids].map(([oracle, server]) => [server, oracle]));
  const stable = (v: unknown) => (v === undefined ? v : (JSON.parse([...back].reduce((t, [from, to]) => t.split(from).join(to), JSON.stringify(v))) as unknown));
  const differences = diffPods(ours.pod, theirs).map((d) => ({ path: stable(d.path) as string, ours: stable(d.ours), kubevirt: stable(d.kubevirt) }));
  return { ...base, differences, notes };
}

/** Runs `work` over `items`, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

describe(`differential: ${corpus.length} launcher pods against KubeVirt's own template service (${real ? 'real control plane' : 'emulator'})`, () => {
  let sandbox: Sandbox | undefined;
  let rt: LocalRuntime | undefined;
  const problems: string[] = [];

  before(async () => {
    const started = Date.now();
    // Pods never start (the node side would otherwise run them and the controller go on to write
    // to them): the pod compared is the pod as the controller created it.
    sandbox = await startSandbox({ nodes: 2, timings: { podStartupMs: 3_600_000 } });
    // The cluster config is read afresh on every reconcile, so a case sees its KubeVirt CR at once.
    rt = newRuntime(sandbox, problems, { clusterConfigTtlMs: 0 });
    rt.start();
    const kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
    const original = await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
    if (!original) throw new Error('the sandbox has no kubevirt/kubevirt CR');
    // Groups of equal KubeVirt settings; the sandbox's own first, a changed launcher image last
    // (a new image makes virt-operator roll out, and every earlier VMI outdated).
    const groups = new Map<string, DifferentialCase[]>();
    for (const c of corpus) {
      const k = settingsKey(settingsOf(c));
      groups.set(k, [...(groups.get(k) ?? []), c]);
    }
    const rank = (k: string) => (k === '' ? 0 : /"image(Tag|Registry)"/.test(k) ? 2 : 1);
    const keys = [...groups.keys()].sort((a, b) => rank(a) - rank(b));
    for (const k of keys) {
      const cases = groups.get(k)!;
      await setKubeVirt(kube, settingsOf(cases[0]!), original);
      await pool(cases, CONCURRENCY, async (c) => {
        try {
          results.set(c.name, await runCase(c, kube, sandbox!));
        } catch (err) {
          results.set(c.name, { name: c.name, description: c.description, kubevirt: c.kubevirt.kind, ours: 'none', differences: [{ path: '(test)', ours: `failed: ${(err as Error).message}`, kubevirt: '' }], notes: [] });
        }
      });
    }
    await setKubeVirt(kube, undefined, original);
    const identical = [...results.values()].filter((r) => r.differences.length === 0).length;
    process.stdout.write(`# differential: ${corpus.length} cases, ${identical} identical, ${corpus.length - identical} differ; ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    if (process.env.DIFFERENTIAL_REPORT) writeFileSync(process.env.DIFFERENTIAL_REPORT, `${JSON.stringify([...results.values()], null, 2)}\n`);
  });

  after(async () => {
    await rt?.stop();
    await sandbox?.stop();
  });

  for (const c of corpus) {
    test(`${c.name}: ${c.description}`, () => {
      // arrange
      const result = results.get(c.name);
      assert.ok(result, `${c.name} was not run${problems.length ? `\nruntime problems:\n${problems.slice(-5).join('\n')}` : ''}`);
      const expected = EXPECTED_DIFFERENCES[c.name];
      // act
      const paths = [...new Set(result.differences.map((d) => d.path))].sort();
      // assert
      if (!expected) {
        assert.equal(paths.length, 0, `${c.name}: our launcher pod differs from KubeVirt's (${c.meta.kubevirtCommit.slice(0, 12)}):\n${formatDifferences(result.differences)}`);
        return;
      }
      assert.ok(paths.length > 0, `${c.name} is identical to KubeVirt's now: remove its entry from test/differential/expected-differences.ts (cause was: ${expected.cause})`);
      const want = [...((real && expected.real) || expected.paths)].sort();
      assert.deepEqual(paths, want, `${c.name}: the differences changed (known cause: ${expected.cause}):\n${formatDifferences(result.differences)}`);
    });
  }
});
