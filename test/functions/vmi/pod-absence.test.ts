/**
 * A Scheduled or Running VMI whose pod is gone goes Failed — but reads "not older than" the cause
 * (the message's view, the API server's watch cache) can hold the VMI and its pods at different
 * moments: right after a migration, the VMI on the target node and the target pod not yet read, or
 * the VMI still on the source node and the source pod already gone. The real lane's drain chaos
 * (seed 12) failed VMIs that had just migrated both ways. The absence is confirmed with consistent
 * reads of both first, and every patch tests the node it was read on (a VMI read on its source
 * node also took the terminating source pod for its own: soak seed 65). Against the sandbox API server (no
 * simulated nodes).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { decorateKubeClient } from '../../../shared/kube/call-counter.ts';
import type { KubeClient, ListResult } from '../../../shared/kube/client.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { NS, vmiManifest } from '../../e2e/support.ts';

let server: ApiServer;
before(async () => {
  server = await startApiServer({ port: 0 });
});
after(async () => {
  await server.close();
});

const user = () => createKubeClient(server.kubeConfig('test'));

function launcher(vmi: VirtualMachineInstance, name: string, node: string, phase: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { 'kubevirt.io': 'virt-launcher', [CREATED_BY_LABEL]: vmi.metadata?.uid ?? '' },
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: vmi.metadata?.name ?? '', uid: vmi.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: { nodeName: node, containers: [{ name: 'compute', image: 'quay.io/kubevirt/virt-launcher:v1.9.0' }] },
    status: { phase },
  };
}

/** The controller's client, its reads "not older than" a version answered without `missing` (a lagging view or cache); consistent reads counted. */
function lagging(kube: KubeClient, missing: string): { kube: KubeClient; consistentLists: () => number } {
  let consistent = 0;
  return {
    kube: decorateKubeClient(kube, async (method, args, call) => {
      const out = await call();
      if (method !== 'list' || (args[0] as { plural?: string }).plural !== 'pods') return out;
      const opts = args[2] as { resourceVersion?: string } | undefined;
      if (opts?.resourceVersion === undefined) {
        consistent++;
        return out;
      }
      const l = out as ListResult<V1Pod>;
      return { ...l, items: l.items.filter((p) => p.metadata?.name !== missing) };
    }),
    consistentLists: () => consistent,
  };
}

/** A VMI Running on node03 (as after a migration to it), and the controller's deps over `kube`. */
async function runningOnNode03(name: string): Promise<VirtualMachineInstance> {
  const created = await user().create(VMIS, vmiManifest(name));
  return user().update(VMIS, { ...created, status: { phase: 'Running', nodeName: 'node03' } } as VirtualMachineInstance);
}

function depsOver(kube: KubeClient, warnings: string[] = []): VmiDeps {
  const config = clusterConfigFromKubeVirt(undefined);
  const st = openSqliteState();
  const log = { ...silentLogger, warn: (message: string, fields?: Record<string, unknown>) => void warnings.push(`${message} ${JSON.stringify(fields)}`) };
  return { kube, expectations: st.expectations, leases: st.leases, clusterConfig: async () => config, now: () => Date.now(), log };
}

test('a Running VMI whose pod a lagging read misses (its migration target) is not failed: a consistent read finds the pod (drain chaos, seed 12, real lane)', async () => {
  // arrange: a VMI that just moved to node03, its source pod done on node01, its target pod running on node03
  const running = await runningOnNode03('moved');
  await user().create(PODS, launcher(running, 'virt-launcher-moved-source', 'node01', 'Succeeded'));
  const target = await user().create(PODS, launcher(running, 'virt-launcher-moved-target', 'node03', 'Running'));
  const { kube, consistentLists } = lagging(createKubeClient(server.kubeConfig('vmi-controller')), 'virt-launcher-moved-target');
  const deps = depsOver(kube);
  // act: woken by the target pod's event, its reads "not older than" it
  await reconcileVmi(`${NS}/moved`, deps, { minResourceVersion: target.metadata?.resourceVersion ?? '' });
  // assert
  const after = await user().get(VMIS, NS, 'moved');
  assert.notEqual(after?.status?.phase, 'Failed', `failed for a pod a lagging read missed: ${JSON.stringify(after?.status?.conditions)}`);
  assert.equal(consistentLists(), 1, 'the absence was confirmed with one consistent list');
});

test('a Running VMI whose pod is really gone still fails, after the consistent reads', async () => {
  // arrange
  const running = await runningOnNode03('gone');
  const old = await user().create(PODS, launcher(running, 'virt-launcher-gone-source', 'node01', 'Succeeded'));
  const { kube, consistentLists } = lagging(createKubeClient(server.kubeConfig('vmi-controller')), 'none');
  const warnings: string[] = [];
  const deps = depsOver(kube, warnings);
  // act
  await reconcileVmi(`${NS}/gone`, deps, { minResourceVersion: old.metadata?.resourceVersion ?? '' });
  // assert
  assert.equal((await user().get(VMIS, NS, 'gone'))?.status?.phase, 'Failed');
  assert.equal(consistentLists(), 1);
  assert.equal(warnings.length, 1, 'one line says why, with the pods it saw');
  assert.match(warnings[0] ?? '', /VMI failed: no pod of it on its node .*"node":"node03".*virt-launcher-gone-source@node01\/.*"confirmedBy":"consistent reads again"/);
});

/** The controller's client, its VMI reads answered from before the VMI moved (`nodeName` as `node`): reads "not older than" a version only, or every read. */
function staleVmi(kube: KubeClient, node: string, which: 'lagging reads' | 'every read'): KubeClient {
  return decorateKubeClient(kube, async (method, args, call) => {
    const out = await call();
    if (method !== 'get' || (args[0] as { plural?: string }).plural !== 'virtualmachineinstances' || !out) return out;
    const opts = args[3] as { resourceVersion?: string } | undefined;
    if (which === 'lagging reads' && opts?.resourceVersion === undefined) return out;
    const v = out as VirtualMachineInstance;
    return { ...v, status: { ...v.status, nodeName: node } };
  });
}

test('a Running VMI read from before its migration (still on the source node, the source pod gone) is read again, not failed (drain chaos, seed 12, real lane)', async () => {
  // arrange: the VMI moved to node03, its source pod on node01 deleted, its target pod running; the view still holds the VMI on node01
  const running = await runningOnNode03('stale-vmi');
  const target = await user().create(PODS, launcher(running, 'virt-launcher-stale-vmi-target', 'node03', 'Running'));
  const warnings: string[] = [];
  const deps = depsOver(staleVmi(createKubeClient(server.kubeConfig('vmi-controller')), 'node01', 'lagging reads'), warnings);
  // act
  await reconcileVmi(`${NS}/stale-vmi`, deps, { minResourceVersion: target.metadata?.resourceVersion ?? '' });
  // assert
  const after = await user().get(VMIS, NS, 'stale-vmi');
  assert.equal(after?.status?.phase, 'Running', `failed on a VMI read from before its migration: ${JSON.stringify(after?.status?.conditions)}`);
  assert.equal(after?.status?.nodeName, 'node03');
  assert.deepEqual(warnings, []);
});

test('a VMI that moves between the reads and the write is not failed: the failing patch tests its node and answers a conflict', async () => {
  // arrange: every read says node01 (the VMI moved to node03 after them), no pod on node01
  const running = await runningOnNode03('moved-meanwhile');
  await user().create(PODS, launcher(running, 'virt-launcher-moved-meanwhile-target', 'node03', 'Running'));
  const deps = depsOver(staleVmi(createKubeClient(server.kubeConfig('vmi-controller')), 'node01', 'every read'));
  // act + assert: the pass is retried (a conflict), the VMI untouched
  await assert.rejects(reconcileVmi(`${NS}/moved-meanwhile`, deps), (err: Error) => err.name === 'KubeTransientError' && /Conflict|test/.test(`${(err as { reason?: string }).reason} ${err.message}`));
  const after = await user().get(VMIS, NS, 'moved-meanwhile');
  assert.equal(after?.status?.phase, 'Running');
});

test('a VMI read from before its migration beside its source pod terminating is not marked PodTerminating: the patch tests the node (soak, seed 65: a replica set replaced a running VMI)', async () => {
  // arrange: the VMI moved to node03, Ready; its source pod on node01 done; the view still holds the VMI on node01
  const running = await runningOnNode03('source-terminating');
  const ready = await user().update(VMIS, { ...running, status: { ...running.status, conditions: [{ type: 'Ready', status: 'True' }] } } as VirtualMachineInstance);
  await user().create(PODS, launcher(ready, 'virt-launcher-source-terminating-source', 'node01', 'Succeeded'));
  const target = await user().create(PODS, launcher(ready, 'virt-launcher-source-terminating-target', 'node03', 'Running'));
  const deps = depsOver(staleVmi(createKubeClient(server.kubeConfig('vmi-controller')), 'node01', 'lagging reads'));
  // act: the pass computes its status from the source pod; its patch is refused, to be retried with fresh reads
  await assert.rejects(reconcileVmi(`${NS}/source-terminating`, deps, { minResourceVersion: target.metadata?.resourceVersion ?? '' }), (err: Error) => err.name === 'KubeTransientError');
  // assert
  const after = await user().get(VMIS, NS, 'source-terminating');
  const readyNow = after?.status?.conditions?.find((c) => c.type === 'Ready');
  assert.deepEqual([after?.status?.nodeName, readyNow?.status, readyNow?.reason ?? ''], ['node03', 'True', '']);
});
