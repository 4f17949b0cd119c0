/**
 * The VMI's labels and annotations the VMI controller keeps on its launcher pod (KubeVirt's
 * syncDynamicAnnotationsAndLabelsToPod, issue 38 item 7): `kubevirt.io/nodeName`, the descheduler's
 * annotations, Velero's hooks as `kubevirt.io/skip-backup-hooks` asks, and the deployment's
 * additional keys (ClusterConfig.launcherLabelsSync / launcherAnnotationsSync). Reconcile passes
 * against the emulator API ctx.server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiServerPerFile } from '../../support/api-server.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { vmiManifest } from '../../e2e/support.ts';

const ctx = apiServerPerFile();

const config = clusterConfigFromKubeVirt(undefined, { additionalLauncherLabelsSync: ['team.example.com/*'], additionalLauncherAnnotationsSync: ['example.com/owner'] });
const deps = (): VmiDeps => {
  const state = openSqliteState();
  return { kube: createKubeClient(ctx.server.kubeConfig('vmi-controller')), expectations: state.expectations, leases: state.leases, clusterConfig: async () => config, now: () => Date.now(), log: silentLogger };
};

describe('the VMI\'s synced labels and annotations follow onto its launcher pod', () => {
  test('set, changed and removed on the VMI: the same on the pod; other keys left alone', async () => {
    // arrange: the VMI and its launcher pod
    const d = deps();
    const created = await ctx.kube.create(VMIS, vmiManifest('sync-1'));
    await reconcileVmi('default/sync-1', d);
    const podOf = async () => (await ctx.kube.list(PODS, 'default', { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` })).items[0];
    assert.ok(await podOf(), 'the launcher pod');
    // act: the VMI gains the node label (as once scheduled), a descheduler opt-in, the deployment's keys, and skips backup hooks
    await ctx.kube.patch(VMIS, 'default', 'sync-1', { type: 'merge', body: { metadata: {
      labels: { 'kubevirt.io/nodeName': 'node-a', 'team.example.com/cost-center': 'c1', unsynced: 'x' },
      annotations: { 'descheduler.alpha.kubernetes.io/evict': 'true', 'example.com/owner': 'alice', 'kubevirt.io/skip-backup-hooks': 'true' },
    } } });
    await reconcileVmi('default/sync-1', d);
    const synced = await podOf();
    await ctx.kube.patch(VMIS, 'default', 'sync-1', { type: 'merge', body: { metadata: { labels: { 'team.example.com/cost-center': null }, annotations: { 'descheduler.alpha.kubernetes.io/evict': null } } } });
    await reconcileVmi('default/sync-1', d);
    const removed = await podOf();
    // assert
    assert.equal(synced?.metadata?.labels?.['kubevirt.io/nodeName'], 'node-a');
    assert.equal(synced?.metadata?.labels?.['team.example.com/cost-center'], 'c1', 'a key under an additional prefix');
    assert.equal(synced?.metadata?.labels?.['unsynced'], undefined, 'a label outside the lists stays off the running pod');
    assert.equal(synced?.metadata?.annotations?.['descheduler.alpha.kubernetes.io/evict'], 'true');
    assert.equal(synced?.metadata?.annotations?.['example.com/owner'], 'alice');
    assert.equal(synced?.metadata?.annotations?.['pre.hook.backup.velero.io/command'], undefined, 'backup hooks skipped: their annotations go');
    assert.equal(removed?.metadata?.labels?.['team.example.com/cost-center'], undefined, 'removed from the VMI, removed from the pod');
    assert.equal(removed?.metadata?.annotations?.['descheduler.alpha.kubernetes.io/evict'], undefined);
    assert.equal(removed?.metadata?.labels?.['kubevirt.io/nodeName'], 'node-a');
  });
});
