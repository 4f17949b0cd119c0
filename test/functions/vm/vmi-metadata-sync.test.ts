/**
 * The VM template's labels and annotations the VM controller keeps on its running VMI (KubeVirt's
 * syncDynamicAnnotationsAndLabelsToVMI, issue 38 item 7): the descheduler's annotations and the
 * deployment's additional keys from the template, `kubevirt.io/skip-backup-hooks` from the VM.
 * Reconcile passes against the emulator API server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { NS, reconcileUntilSettled, sandboxPerFile, vmManifest } from './support.ts';

const ctx = sandboxPerFile();

describe('the VM template\'s synced labels and annotations follow onto the running VMI', () => {
  test('changed on the VM after the start: changed on the VMI; other template keys wait for a restart', async () => {
    // arrange: a running VM
    const config = clusterConfigFromKubeVirt(undefined, { additionalLauncherLabelsSync: ['team.example.com/*'] });
    const h = { ...ctx.h, deps: { ...ctx.h.deps, clusterConfig: async () => config } };
    await ctx.h.kube.create(VMS, vmManifest('msync-1', { runStrategy: 'Always' }));
    await reconcileUntilSettled(ctx.server, h, `${NS}/msync-1`);
    assert.ok(await ctx.h.kube.get(VMIS, NS, 'msync-1'), 'the VMI');
    // act: the template gains a descheduler opt-in, a team label and an unsynced label; the VM skips backup hooks
    await ctx.h.kube.patch(VMS, NS, 'msync-1', { type: 'merge', body: {
      metadata: { annotations: { 'kubevirt.io/skip-backup-hooks': 'true' } },
      spec: { template: { metadata: { labels: { 'team.example.com/cost-center': 'c1', unsynced: 'x' }, annotations: { 'descheduler.alpha.kubernetes.io/evict': 'true' } } } },
    } });
    await reconcileUntilSettled(ctx.server, h, `${NS}/msync-1`);
    // assert
    const vmi = await ctx.h.kube.get(VMIS, NS, 'msync-1');
    assert.equal(vmi?.metadata?.annotations?.['descheduler.alpha.kubernetes.io/evict'], 'true');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/skip-backup-hooks'], 'true', 'from the VM\'s own metadata');
    assert.equal(vmi?.metadata?.labels?.['team.example.com/cost-center'], 'c1');
    assert.equal(vmi?.metadata?.labels?.['unsynced'], undefined, 'not a synced key');
  });
});
