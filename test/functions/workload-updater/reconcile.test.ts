import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, PODS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import type { WorkloadUpdaterDeps } from '../../../functions/workload-updater/deps.ts';
import { reconcileWorkloadUpdate } from '../../../functions/workload-updater/reconcile.ts';
import { OUTDATED_VMIS_GAUGE } from '../../../functions/workload-updater/deps.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import { publishEmf } from '../../../shared/metrics/emf.ts';

const CONTROLLER = 'workload-updater';
const NOW = Date.parse('2026-12-01T12:00:00Z');
const CURRENT = 'quay.io/kubevirt/virt-launcher:v1.9.0';
const OLD = 'quay.io/kubevirt/virt-launcher:v1.8.0';
let server: ApiServer;
let kube: KubeClient;
let deps: WorkloadUpdaterDeps;
let now = NOW;

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  kube = createKubeClient(server.kubeConfig('test'));
  const state = openSqliteState();
  now = NOW;
  deps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    expectations: state.expectations,
    leases: state.leases,
    clusterConfig: async () => clusterConfigFromKubeVirt((await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt'))!),
    now: () => now,
    random: () => 0.5,
    log: { info: () => undefined, warn: () => undefined },
  };
});
afterEach(async () => {
  await server.close();
});

async function kubevirt(methods: string[], status: Record<string, unknown> = {}): Promise<void> {
  await kube.create(KUBEVIRTS, { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { workloadUpdateStrategy: { workloadUpdateMethods: methods } } } as KubeVirt);
  await kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { status: { phase: 'Deployed', observedDeploymentID: 'a', targetDeploymentID: 'a', ...status } } }, { subresource: 'status' });
}

async function vmi(name: string, version: string | undefined, o: { migratable?: boolean; annotations?: Record<string, string> } = {}): Promise<VirtualMachineInstance> {
  await kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default', ...(o.annotations ? { annotations: o.annotations } : {}) }, spec: { domain: { devices: {} } } } as VirtualMachineInstance);
  const conditions = o.migratable === false ? [] : [{ type: 'LiveMigratable', status: 'True' }];
  return kube.patch(VMIS, 'default', name, { type: 'merge', body: { status: { phase: 'Running', nodeName: 'node01', conditions, ...(version ? { launcherContainerImageVersion: version } : {}) } } });
}

async function migration(name: string, vmiName: string, phase: string, annotations: Record<string, string> = {}): Promise<void> {
  await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default', annotations }, spec: { vmiName } } as VirtualMachineInstanceMigration);
  await kube.patch(MIGRATIONS, 'default', name, { type: 'merge', body: { status: { phase } } }, { subresource: 'status' });
}

const outdatedCount = async () => (await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt'))?.status?.outdatedVirtualMachineInstanceWorkloads;
const ours = async () => (await kube.list(MIGRATIONS, 'default')).items.filter((m) => m.metadata?.annotations?.['kubevirt.io/workloadUpdateMigration'] !== undefined);
const writes = () => server.audit.query({ identity: CONTROLLER }).map((e) => (e.resource === 'events' ? `event ${(e.object as { reason?: string }).reason}` : `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}`));

describe('workload-updater reconcile against the sandbox API server', () => {
  test('mid-upgrade (Deploying, or deployment ids differ): nothing at all, not even the status', async () => {
    // arrange
    await kubevirt(['LiveMigrate'], { phase: 'Deploying' });
    await vmi('a', OLD);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    await kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { status: { phase: 'Deployed', targetDeploymentID: 'b' } } }, { subresource: 'status' });
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.deepEqual(writes(), []);
  });

  test('LiveMigrate: the outdated, migratable VMIs get a system-critical kubevirt-workload-update- migration; the count is added to the status', async () => {
    // arrange
    await kubevirt(['LiveMigrate']);
    await vmi('old-1', OLD);
    await vmi('old-2', OLD);
    await vmi('current', CURRENT);
    await vmi('unknown', undefined);
    await vmi('old-stuck', OLD, { migratable: false });
    // act
    const outcome = await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.equal(await outdatedCount(), 3, 'old-1, old-2 and the non-migratable one are counted; unknown is not outdated');
    const made = await ours();
    assert.deepEqual(made.map((m) => m.spec?.vmiName).sort(), ['old-1', 'old-2']);
    assert.ok(made.every((m) => m.metadata?.name?.startsWith('kubevirt-workload-update-') && m.spec?.priority === 'system-critical' && m.metadata?.annotations?.['kubevirt.io/workloadUpdateMigration'] === ''));
    assert.equal(writes()[0], 'patch kubevirts/status', 'the status goes first');
    assert.equal(writes().filter((w) => w === 'event SuccessfulCreate').length, 2);
    assert.equal(outcome.kind, 'requeue', 'actionable VMIs remain (old-stuck is counted, never touched): a re-run is armed');
  });

  test('an existing count is replaced behind a test op; an unchanged one is not written', async () => {
    // arrange
    await kubevirt([], { outdatedVirtualMachineInstanceWorkloads: 7 });
    await vmi('old-1', OLD);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.equal(await outdatedCount(), 1);
    assert.deepEqual(writes(), ['patch kubevirts/status'], 'no methods: counted, nothing done; written once');
  });

  test('the per-cluster budget: 5 running migrations leave no room; Pending ones do not count', async () => {
    // arrange
    await kubevirt(['LiveMigrate']);
    for (let i = 0; i < 5; i++) await migration(`busy-${i}`, `other-${i}`, i < 4 ? 'Running' : 'Scheduling');
    await migration('waiting', 'other-9', 'Pending');
    await vmi('old-1', OLD);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.deepEqual(await ours(), []);
  });

  test('rounds at most every 5 s (defaultThrottleInterval): a pass right after a round creates nothing and asks again in 5 s', async () => {
    // arrange
    await kubevirt(['LiveMigrate']);
    for (let i = 0; i < 7; i++) await vmi(`old-${i}`, OLD);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    const first = (await ours()).length;
    now += 1000;
    const soon = await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    const afterSoon = (await ours()).length;
    now += 5000;
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.equal(first, 5, 'parallelMigrationsPerCluster');
    assert.equal(afterSoon, 5);
    assert.deepEqual(soon, { kind: 'requeue', afterSeconds: 5, why: 'workload update throttle' });
    assert.equal((await ours()).length, 7, 'the Pending ones do not count against the next round');
  });

  test('Evict: the current launcher pod is evicted (SuccessfulEvict "…: <nil>"); a VMI with no pod is a FailedEvict and a failed pass, not a crash', async () => {
    // arrange
    await kubevirt(['Evict']);
    const a = await vmi('old-a', OLD);
    await vmi('old-nopod', OLD);
    await kube.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'virt-launcher-old-a', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'old-a', uid: a.metadata?.uid ?? '', controller: true }] }, spec: { nodeName: 'node01', containers: [{ name: 'compute', image: OLD }] } } as V1Pod);
    // act
    const err = await reconcileWorkloadUpdate('kubevirt/kubevirt', deps).then(() => undefined, (e: unknown) => e as Error);
    // assert
    assert.match(err?.message ?? '', /Error detecting active pod for VMI during workload update/);
    const pod = await kube.get(PODS, 'default', 'virt-launcher-old-a');
    assert.ok(!pod || pod.metadata?.deletionTimestamp, 'evicted');
    const msgs = server.audit.query({ identity: CONTROLLER, resource: 'events' }).map((e) => `${(e.object as { reason?: string }).reason}: ${(e.object as { message?: string }).message}`);
    assert.ok(msgs.includes('SuccessfulEvict: Initiated eviction of VMI as part of automated workload update: <nil>'), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.startsWith('FailedEvict: Error detecting active pod')));
    assert.deepEqual(await ours(), [], 'Evict only: no migrations');
  });

  test('a change that is gone (abortion annotation): its workload-update migration is deleted, SuccessfulChangeAbortion', async () => {
    // arrange
    await kubevirt(['LiveMigrate']);
    await vmi('abort-me', CURRENT, { annotations: { 'kubevirt.io/testWorkloadUpdateMigrationAbortion': '' } });
    await migration('wu-1', 'abort-me', 'Scheduling', { 'kubevirt.io/workloadUpdateMigration': '' });
    await migration('by-hand', 'abort-me', 'Failed');
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.deepEqual((await kube.list(MIGRATIONS, 'default')).items.map((m) => m.metadata?.name), ['by-hand']);
    assert.ok(writes().includes('event SuccessfulChangeAbortion'));
  });

  test('the gauge kubevirt_vmi_number_of_outdated follows the count (no labels, as KubeVirt), in /metrics text and as EMF', async () => {
    // arrange
    const metrics = new MetricsRegistry();
    deps = { ...deps, metrics };
    await kubevirt([]);
    await vmi('old-1', OLD);
    await vmi('old-2', OLD);
    await vmi('current', CURRENT);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    const first = metrics.value(OUTDATED_VMIS_GAUGE);
    await kube.patch(VMIS, 'default', 'old-2', { type: 'merge', body: { status: { launcherContainerImageVersion: CURRENT } } });
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    assert.equal(first, 2, 'counted whatever the methods (none here)');
    assert.equal(metrics.value(OUTDATED_VMIS_GAUGE), 1);
    assert.equal(await outdatedCount(), 1, 'the same figure as the CR');
    assert.match(metrics.render(), /# TYPE kubevirt_vmi_number_of_outdated gauge\nkubevirt_vmi_number_of_outdated 1\n/);
    const lines: string[] = [];
    publishEmf(metrics, 'VirtReconciler', (l) => lines.push(l), () => NOW);
    const emf = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => OUTDATED_VMIS_GAUGE in l);
    assert.equal(emf?.[OUTDATED_VMIS_GAUGE], 1);
    assert.deepEqual((emf?._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]?.Dimensions, [[]]);
  });

  test('a volume change with valid migrated volumes is migrated though the VMI is not LiveMigratable; one leaving an RWO claim behind is not', async () => {
    // arrange
    await kubevirt(['LiveMigrate']);
    const volumeChange = async (name: string, migrated: string[]) => {
      await vmi(name, CURRENT, { migratable: false });
      await kube.patch(VMIS, 'default', name, {
        type: 'merge',
        body: {
          status: {
            conditions: [{ type: 'VolumesChange', status: 'True' }],
            migratedVolumes: migrated.map((volumeName) => ({ volumeName })),
            volumeStatus: ['disk', 'data'].map((v) => ({ name: v, target: '', persistentVolumeClaimInfo: { claimName: `${name}-${v}`, accessModes: ['ReadWriteOnce'] } })),
          },
        },
      });
    };
    await volumeChange('vol-ok', ['disk', 'data']);
    await volumeChange('vol-rwo-left', ['disk']);
    // act
    await reconcileWorkloadUpdate('kubevirt/kubevirt', deps);
    // assert
    const migrations = await ours();
    assert.deepEqual(migrations.map((m) => m.spec?.vmiName), ['vol-ok']);
    assert.equal(migrations[0]?.spec?.priority, 'user-triggered');
    assert.deepEqual(migrations[0]?.metadata?.labels, { 'kubevirt.io/volume-update-migration': 'vol-ok' });
    assert.equal(await outdatedCount(), 2, 'both counted');
  });
});
