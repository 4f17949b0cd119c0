/**
 * The VMI controller reads a VMI's migrations only where its decision uses them (sync.ts step 6):
 * before a launcher pod is created, where a running migration of the VMI holds the creation
 * back. Any other pass of a VMI that has migrated once sends no list of the namespace's
 * migrations (a drain's VMIs listed them a dozen times each). One pass each against the emulator.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiServerPerFile } from '../../support/api-server.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { MIGRATIONS, NAMESPACES, PODS, VMIS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { vmiManifest } from '../../e2e/support.ts';

const ctx = apiServerPerFile();
const T0 = '2026-12-07T10:00:00Z';

/** The controller's deps, with every LIST of migrations it sends counted. */
function depsCountingMigrationLists(): { deps: VmiDeps; migrationLists: () => number } {
  const kube = createKubeClient(ctx.server.kubeConfig('vmi-controller'));
  let lists = 0;
  const counting: KubeClient = Object.assign(Object.create(kube) as KubeClient, {
    list: ((res, ns, opts) => {
      if (res === MIGRATIONS) lists++;
      return kube.list(res, ns, opts);
    }) as KubeClient['list'],
  });
  const state = openSqliteState();
  const config = clusterConfigFromKubeVirt(undefined);
  return { deps: { kube: counting, expectations: state.expectations, leases: state.leases, clusterConfig: async () => config, now: () => Date.now(), log: silentLogger }, migrationLists: () => lists };
}

/** A VMI in `ns` with `status` (a migration state among it). */
async function vmiWithStatus(ns: string, name: string, status: NonNullable<VirtualMachineInstance['status']>): Promise<VirtualMachineInstance> {
  const vmi = vmiManifest(name);
  vmi.metadata!.namespace = ns;
  const created = await ctx.kube.create(VMIS, vmi);
  // A VMI has no status subresource: its status is written with the object.
  return ctx.kube.update(VMIS, { ...created, status });
}

async function runningMigration(ns: string, vmiName: string): Promise<void> {
  const m = await ctx.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `${vmiName}-mig`, namespace: ns }, spec: { vmiName } } as VirtualMachineInstanceMigration);
  await ctx.kube.update(MIGRATIONS, { ...m, status: { phase: 'Running' } } as VirtualMachineInstanceMigration, { subresource: 'status' });
}

describe("the VMI controller reads a VMI's migrations only before a pod creation", () => {
  test('a Pending VMI with a running migration: the list is read, and no launcher pod is created', async () => {
    // arrange
    const ns = 'mig-read-pending';
    await ctx.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const vmi = await vmiWithStatus(ns, 'held', { phase: 'Pending', migrationState: { startTimestamp: T0 } });
    await runningMigration(ns, 'held');
    const { deps, migrationLists } = depsCountingMigrationLists();

    // act
    await reconcileVmi(`${ns}/held`, deps).catch(() => undefined);

    // assert
    assert.equal(migrationLists(), 1);
    const pods = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${vmi.metadata?.uid ?? ''}` });
    assert.equal(pods.items.length, 0, 'no launcher pod while a migration of the VMI runs');
  });

  test('a VMI past Pending that migrated once: no list of migrations', async () => {
    // arrange
    const ns = 'mig-read-running';
    await ctx.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await vmiWithStatus(ns, 'moved', { phase: 'Running', nodeName: 'node01', migrationState: { startTimestamp: T0, endTimestamp: T0, completed: true } });
    await runningMigration(ns, 'moved');
    const { deps, migrationLists } = depsCountingMigrationLists();

    // act
    await reconcileVmi(`${ns}/moved`, deps).catch(() => undefined);

    // assert
    assert.equal(migrationLists(), 0);
  });
});
