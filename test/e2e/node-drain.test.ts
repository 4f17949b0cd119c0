/**
 * `kubectl drain` end to end (issue 14): the real kubectl against the sandbox, whose virt-api
 * eviction webhook marks migrating VMIs and answers 429 (on the emulator an in-process admission
 * hook; on the real lane KubeVirt's ValidatingWebhookConfiguration on pods/eviction, served over
 * HTTPS by the sandbox); relay → SQLite queue → evacuation,
 * migration, VMI and VM functions → sandbox, on a sped-up sandbox clock. Six LiveMigrate VMIs
 * leave the node by live migration within the limits (at most 2 outbound from one node, 5 in the
 * cluster, checked at every audit-log instant); a VMI with eviction strategy None is evicted, and
 * its VM (runStrategy Always) starts it again on another node.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EVACUATION_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import { MIGRATIONS, NODES, VMIS, VMS } from '../../shared/api/resources.ts';
import { KUBECTL, runKubectl, type KubectlResult } from '../kubectl/support.ts';
import { REAL } from '../support/lanes.ts';
import { inCommitOrder, peaksFromAudit, type Peaks } from '../support/migration-peaks.ts';
import { NS, startSlice, until, vmiManifest, vmManifest, type Slice } from './support.ts';

const SPEED = 10;
const MIGRATING = Array.from({ length: 6 }, (_, i) => `drain-${i + 1}`);

function kubectl(kubeconfig: string, dir: string, args: string[]): Promise<KubectlResult> {
  return runKubectl({ kubeconfig, dir, timeoutMs: 240_000 }, args);
}

describe('kubectl drain of a node with LiveMigrate VMIs', { skip: KUBECTL ? false : 'no kubectl on this machine' }, () => {
  let s: Slice;
  let dir: string;
  /** The migration peaks of the drain (the first test), judged by the second. */
  let peaks: Peaks | undefined;
  before(async () => {
    s = await startSlice({ speed: SPEED, nodes: 3 });
    dir = await mkdtemp(join(tmpdir(), 'vr-drain-'));
  });
  after(async () => {
    await s?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const setUnschedulable = (node: string, unschedulable: boolean) => s.kube.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable } } });

  test('6 VMIs migrate off within the limits; the None VMI is evicted and its VM restarts it elsewhere; drain completes', async () => {
    // arrange: everything lands on node01 (the others cordoned meanwhile)
    const [node01, ...others] = s.sandbox.nodeNames as [string, ...string[]];
    for (const n of others) await setUnschedulable(n, true);
    for (const name of MIGRATING) await s.kube.create(VMIS, vmiManifest(name, { evictionStrategy: 'LiveMigrate' }));
    const keeperTemplate = vmiManifest('keeper', { evictionStrategy: 'None' }).spec;
    await s.kube.create(VMS, { ...vmManifest('keeper', { runStrategy: 'Always' }), spec: { runStrategy: 'Always', template: { metadata: { labels: { 'kubevirt.io/vm': 'keeper' } }, spec: keeperTemplate } } });
    await until('all on node01, Running and LiveMigratable', async () => {
      const vmis = await Promise.all([...MIGRATING, 'keeper'].map((n) => s.kube.get(VMIS, NS, n)));
      return vmis.every((v) => v?.status?.phase === 'Running' && v.status.nodeName === node01 && (v.metadata?.name === 'keeper' || v.status.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True')));
    }, { problems: s.problems });
    const keeperUid = (await s.kube.get(VMIS, NS, 'keeper'))?.metadata?.uid;
    for (const n of others) await setUnschedulable(n, false);
    s.sandbox.apiServer.audit.clear();
    // act
    const drain = await kubectl(s.sandbox.kubeconfigPath, dir, ['drain', node01, '--ignore-daemonsets', '--force', '--delete-emptydir-data', '--timeout=200s']);
    // assert
    assert.equal(drain.code, 0, `drain failed:\n${drain.stderr.slice(-2000)}\nruntime problems:\n${s.problems.slice(-10).join('\n')}`);
    assert.match(drain.stdout, new RegExp(`node/${node01} drained`));
    assert.match(drain.stderr + drain.stdout, /Eviction triggered evacuation of VMI/, 'the webhook answered 429 while the VMIs migrated');
    for (const name of MIGRATING) {
      const v = await s.kube.get(VMIS, NS, name);
      assert.equal(v?.status?.phase, 'Running', `${name} ${v?.status?.phase}`);
      assert.notEqual(v?.status?.nodeName, node01, `${name} moved off ${node01}`);
      assert.equal(v?.status?.evacuationNodeName, undefined, `${name}: the mark is cleared once it has moved`);
    }
    const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.metadata?.annotations?.[EVACUATION_MIGRATION_ANNOTATION] === node01);
    assert.deepEqual(migrations.map((m) => m.spec?.vmiName).sort(), [...MIGRATING].sort(), 'one evacuation migration per VMI');
    assert.ok(migrations.every((m) => m.status?.phase === 'Succeeded' && m.metadata?.name?.startsWith('kubevirt-evacuation-')));
    // Every VMI was on node01 as the log starts (the replay attributes target pods to source nodes).
    peaks = peaksFromAudit(inCommitOrder(s.sandbox.apiServer.audit.query()), new Map([...MIGRATING, 'keeper'].map((n) => [n, node01])));
    assert.equal(peaks.started, 6);
    // While marked, each VMI had EvictionRequested and its launcher pod the descheduler's annotation (both gone with the mark).
    const audit = s.sandbox.apiServer.audit.query();
    for (const name of MIGRATING) {
      const requested = audit.some((e) => e.resource === 'virtualmachineinstances' && e.name === name && ((e.object as { status?: { conditions?: { type?: string; status?: string; message?: string }[] } }).status?.conditions ?? []).some((c) => c.type === 'EvictionRequested' && c.status === 'True' && c.message === 'VMI is marked for eviction'));
      assert.ok(requested, `${name}: EvictionRequested=True while marked`);
      const v = await s.kube.get(VMIS, NS, name);
      assert.equal(v?.status?.conditions?.find((c) => c.type === 'EvictionRequested'), undefined, `${name}: EvictionRequested removed with the mark`);
    }
    const annotated = audit.filter((e) => e.resource === 'pods' && e.verb === 'patch' && (e.object.metadata.annotations as Record<string, string> | undefined)?.['descheduler.alpha.kubernetes.io/eviction-in-progress'] === 'true');
    assert.ok(annotated.length >= 1, 'a source launcher pod was annotated eviction-in-progress');
    if (REAL) assert.ok(s.sandbox.evictionWebhook?.verdicts().some((v) => v.includes('Eviction triggered evacuation of VMI')), 'the webhook server marked VMIs');
    await until('keeper restarted by its VM on another node', async () => {
      const v = await s.kube.get(VMIS, NS, 'keeper');
      return v?.metadata?.uid !== keeperUid && v?.status?.phase === 'Running' && v.status.nodeName !== node01;
    }, { problems: s.problems });
    console.log(`drain: peak outbound ${peaks.perNode} (${peaks.perNodeAt}), peak running ${peaks.cluster}, ${peaks.started} target pods; VMIs now on ${JSON.stringify(Object.fromEntries(await Promise.all(MIGRATING.map(async (n) => [n, (await s.kube.get(VMIS, NS, n))?.status?.nodeName]))))}`);
  });

  test('the drain kept the migration limits at every audit-log instant (2 outbound from one node, 5 in the cluster)', () => {
    // arrange: the drain above
    assert.ok(peaks, 'the drain ran');
    // act + assert
    assert.ok(peaks.perNode <= 2, `at most 2 outbound from one node at any instant, saw ${peaks.perNode} on ${peaks.perNodeAt}`);
    assert.ok(peaks.cluster <= 5, `at most 5 running in the cluster, saw ${peaks.cluster}`);
  });
});
