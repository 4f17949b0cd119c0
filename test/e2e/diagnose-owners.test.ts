/**
 * `virt-reconciler diagnose` beyond the VMI, VM and migration (issue 18): on the sandbox with the
 * local runtime (relay → queue → replica set, VMI, evacuation and migration functions), a replica
 * set short of replicas and a node drain that does not progress, each provoked the way it happens,
 * then the real CLI in a child process: the first line names the cause. A healthy replica set and
 * a quiet node get "healthy" and exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readOnly } from '../../ops/cluster-reader.ts';
import { diagnose, DIAGNOSABLE } from '../../ops/diagnose/diagnose.ts';
import { parseTarget } from '../../ops/target.ts';
import type { VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { MIGRATIONS, NODES, PODS, VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { runCli } from '../support/cli.ts';
import { diagnoseCli as diagnoseSlice, NS, queueIdle, startSlice, until, vmiManifest, type Slice } from './support.ts';

/** The CLI with no $KUBECONFIG of the machine's: the cluster is the sandbox's, passed by flag. */
const cli = (args: readonly string[]) => runCli(args, { KUBECONFIG: '' });

const dir = mkdtempSync(join(tmpdir(), 'diagnose-owners-e2e-'));
const db = join(dir, 'virt-reconciler.db');
let s: Slice;

const diagnoseCli = (target: string) => diagnoseSlice(s, db, target);

function replicaSet(name: string, replicas: number, volumes?: unknown[]): VirtualMachineInstanceReplicaSet {
  const base = vmiManifest(name);
  const labels = { app: name };
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceReplicaSet',
    metadata: { name, namespace: NS },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { ...base.spec, ...(volumes ? { volumes } : {}) } } },
  } as VirtualMachineInstanceReplicaSet;
}

before(async () => {
  s = await startSlice({ runtime: { dbPath: db } });
  while (!s.rt.relay.ready) await new Promise((r) => setTimeout(r, 20));
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('virt-reconciler diagnose: replica sets and node drains on the sandbox', () => {
  test('a replica set with all its replicas: "healthy", exit 0', async () => {
    // arrange
    await s.kube.create(VMI_REPLICA_SETS, replicaSet('fine-rs', 2));
    await until('fine-rs ready', async () => (await s.kube.get(VMI_REPLICA_SETS, NS, 'fine-rs'))?.status?.readyReplicas === 2, { tries: 6000, problems: s.problems });
    await until('queues idle', () => queueIdle(s, ['replicaset', 'vmi']));
    // On a loaded machine the relay may still be delivering the replica set's last status write,
    // which diagnose rightly reports as relay lag: wait until the pipeline has caught up.
    await until('the pipeline caught up', async () => (await diagnose(parseTarget('vmirs/default/fine-rs', DIAGNOSABLE), { cluster: readOnly(s.kube), queue: s.rt.queue, state: s.rt.state, now: Date.now() })).healthy, { tries: 6000 });
    // act
    const d = await diagnoseCli('vmirs/default/fine-rs');
    // assert
    assert.equal(d.code, 0, d.text);
    assert.equal(d.first, 'healthy: replica set default/fine-rs has 2 of 2 replicas ready');
  });

  test('a replica set short of replicas: its first unready VMI\'s cause on the first line, exit 1', async () => {
    // arrange: every replica's disk is a PVC that does not exist, so no VMI gets a launcher pod.
    await s.kube.create(VMI_REPLICA_SETS, replicaSet('short-rs', 2, [{ name: 'containerdisk', persistentVolumeClaim: { claimName: 'missing-data' } }]));
    await until('short-rs has its VMIs', async () => (await s.kube.list(VMIS, NS)).items.filter((v) => v.metadata?.name?.startsWith('short-rs')).length === 2, { problems: s.problems });
    await until('queues idle', () => queueIdle(s, ['replicaset', 'vmi']));
    // act
    const d = await diagnoseCli('replicaset/default/short-rs');
    // assert
    assert.equal(d.code, 1, d.text);
    assert.match(d.first, /^replica set short of replicas \(0 of 2 ready\): VMI short-rs\w+: no launcher pod: PVC default\/missing-data does not exist \(volume containerdisk\)$/, d.text);
    assert.equal(d.json.findings[0]?.check, 'missing-claim');
  });

  test('a quiet node: "healthy", exit 0', async () => {
    // arrange
    const node = s.sandbox.nodeNames[1]!;
    // act
    const d = await diagnoseCli(`node/${node}`);
    // assert
    assert.equal(d.code, 0, d.text);
    assert.match(d.first, new RegExp(`^healthy: node ${node} is Ready, \\d+ VMIs?`));
  });

  test('a drain that does not progress: the evacuation migration\'s target pod cannot be placed', async () => {
    // arrange: a LiveMigrate VMI pinned to its node, then the node gets KubeVirt's drain taint.
    const node = s.sandbox.nodeNames[0]!;
    await s.kube.create(VMIS, vmiManifest('pinned', { nodeSelector: { 'kubernetes.io/hostname': node }, evictionStrategy: 'LiveMigrate' }));
    await until('pinned Running', async () => (await s.kube.get(VMIS, NS, 'pinned'))?.status?.phase === 'Running', { problems: s.problems });
    await s.kube.patch(NODES, undefined, node, { type: 'merge', body: { spec: { taints: [{ key: 'kubevirt.io/drain', value: 'draining', effect: 'NoSchedule' }] } } });
    await until('an evacuation migration', async () => (await s.kube.list(MIGRATIONS, NS)).items.some((m) => m.spec?.vmiName === 'pinned'), { problems: s.problems });
    await until('its target pod unschedulable', async () => {
      const pods = await s.kube.list(PODS, NS, { labelSelector: MIGRATION_JOB_UID_LABEL });
      return pods.items.some((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'));
    });
    await until('queues idle', () => queueIdle(s, ['evacuation', 'migration']));
    // act
    const d = await diagnoseCli(`node/${node}`);
    // assert
    assert.equal(d.code, 1, d.text);
    assert.match(d.first, new RegExp(`^drain of ${node} is not progressing: migration kubevirt-evacuation-\\w+ of VMI default/pinned: target pod unschedulable: 0/\\d+ nodes are available: .*; the unschedulable timeout fires in [45] min( \\d+ s)?$`), d.text);
    assert.equal(d.json.findings[0]?.check, 'target-unschedulable');
  });

  test('bad input: a node with a namespace, a replica set without one: exit 2, one line', async () => {
    // arrange
    const cases = [['diagnose', 'node/default/node01'], ['diagnose', 'replicaset/rs']];
    // act
    const runs = await Promise.all(cases.map((c) => cli([...c, '--db', db])));
    // assert
    for (const [i, r] of runs.entries()) {
      assert.equal(r.code, 2, `${cases[i]!.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });
});
