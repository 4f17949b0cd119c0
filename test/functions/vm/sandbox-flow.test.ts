/**
 * The VM function with the VMI function and the simulated nodes (scheduler, kubelet,
 * virt-handler): nothing set by hand, the VM goes Stopped → Starting → Running → Stopping →
 * Stopped through the same reconciles the runtime would run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { AS_PRODUCT } from '../../support/as-product.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import type { VmDeps } from '../../../functions/vm/deps.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { NS, vmManifest } from './support.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';

let sandbox: Sandbox;

before(async () => {
  sandbox = await startSandbox({ nodes: 1, timings: { podStartupMs: 20, vmiBootMs: 20, vmiShutdownMs: 20 } });
});
after(async () => {
  await sandbox.stop();
});

test('Always → Running through the VMI function and the simulated node; Halted → Stopped, VMI gone', async () => {
  // arrange
  const kube = createKubeClient(sandbox.apiServer.kubeConfig('vm-controller'), AS_PRODUCT);
  const state = openSqliteState();
  const log = { info: () => undefined, warn: () => undefined };
  const vmDeps: VmDeps = { kube, expectations: state.expectations, now: Date.now, log };
  const vmiDeps: VmiDeps = { kube, expectations: state.expectations, leases: state.leases, now: Date.now, log, clusterConfig: async () => clusterConfigFromKubeVirt() };
  await kube.create(VMS, vmManifest('flow-1', { runStrategy: 'Always' }));
  const seen: string[] = [];
  // Both controllers, as the queue would call them; bounded so a stuck flow fails instead of hanging.
  const runUntil = async (want: (s: string | undefined) => boolean): Promise<string | undefined> => {
    for (let i = 0; i < 200; i++) {
      await reconcileVm(`${NS}/flow-1`, vmDeps).catch(() => undefined);
      await reconcileVmi(`${NS}/flow-1`, vmiDeps).catch(() => undefined);
      const s = (await kube.get(VMS, NS, 'flow-1'))?.status?.printableStatus;
      if (s && seen.at(-1) !== s) seen.push(s);
      if (want(s)) return s;
      await sleep(10);
    }
    return (await kube.get(VMS, NS, 'flow-1'))?.status?.printableStatus;
  };
  // act
  const running = await runUntil((s) => s === 'Running');
  const vmi = await kube.get(VMIS, NS, 'flow-1');
  await kube.patch(VMS, NS, 'flow-1', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
  const stopped = await runUntil((s) => s === 'Stopped');
  const gone = await kube.get(VMIS, NS, 'flow-1');
  // assert
  assert.equal(running, 'Running', `statuses seen: ${seen.join(' → ')}`);
  assert.ok(vmi?.status?.nodeName, 'the VMI was handed off to a node');
  assert.equal(stopped, 'Stopped', `statuses seen: ${seen.join(' → ')}`);
  assert.equal(gone, undefined, 'the stopped VMI is gone');
  assert.ok(seen.indexOf('Starting') < seen.indexOf('Running') && seen.indexOf('Running') < seen.indexOf('Stopped'), seen.join(' → '));
  await state.close();
});
