/**
 * The migration target pod is rendered with the cluster facts the launcher pod is (docs/fidelity.md,
 * issue 38 item 1): each claim's volume mode, access modes and UID (Block → a device, RWX → a
 * shared path), the namespace's ResourceQuotas and labels (automatic limits), a hook sidecar's
 * ConfigMap. The oracle cannot render target pods, so the judge is our launcher pod for the same
 * VMI and facts (itself judged by KubeVirt's code in the corpus): one reconcile pass of the
 * migration controller against the emulator API server, its target pod's compute container
 * compared with the launcher pod's. And a target pod the namespace's quota refuses (item 2): the
 * migration's `migrationRejectedByResourceQuota` condition, set and cleared as KubeVirt does.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiServerPerFile } from '../../support/api-server.ts';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { CONFIG_MAPS, EVENTS, MIGRATIONS, NAMESPACES, PODS, PVCS, RESOURCE_QUOTAS, VMIS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../../shared/config/cluster-config.ts';
import type { KubeObject, Resource } from '../../../shared/kube/client.ts';
import { renderFactsFromObjects, type ClusterObject } from '../../../shared/template/cluster-facts.ts';
import { renderLauncherPod } from '../../../shared/template/render-launcher-pod.ts';
import type { MigrationDeps } from '../../../functions/migration/deps.ts';
import { migrationDeps } from './support.ts';
import { reconcileMigration } from '../../../functions/migration/reconcile.ts';

const T0 = '2026-12-02T07:00:00Z';
const ctx = apiServerPerFile();

const deps = (config: ClusterConfig): MigrationDeps => migrationDeps(ctx.server, config);

/** A running VMI in `ns` on a node of its own (the per-node migration limit stays out of the way) with the given volumes (each a virtio disk) and its source pod. */
async function runningVmi(ns: string, volumes: NonNullable<VirtualMachineInstance['spec']['volumes']>, extra: Partial<VirtualMachineInstance['spec']> = {}, annotations: Record<string, string> = {}): Promise<VirtualMachineInstance> {
  const created = await ctx.kube.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vm', namespace: ns, annotations },
    spec: { domain: { devices: { disks: volumes.map((v) => ({ name: v.name, disk: { bus: 'virtio' } })) }, resources: { requests: { memory: '128Mi' } } }, volumes, ...extra },
  } as VirtualMachineInstance);
  const vmi = await ctx.kube.patch(VMIS, ns, 'vm', { type: 'merge', body: { status: { phase: 'Running', nodeName: `node-${ns}`, selinuxContext: 'none' } } });
  await ctx.kube.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'virt-launcher-src', namespace: ns, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': created.metadata?.uid ?? '' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm', uid: created.metadata?.uid ?? '', controller: true }] },
    // Limits, as a launcher pod under a limiting quota has them: quota admission refuses a pod without.
    spec: { nodeName: `node-${ns}`, containers: [{ name: 'compute', image: 'l', resources: { limits: { cpu: '1', memory: '1Gi' } } }] },
  } as V1Pod);
  await ctx.kube.patch(PODS, ns, 'virt-launcher-src', { type: 'merge', body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'compute', ready: true, restartCount: 0, image: 'l', imageID: 'l@sha256:1', state: { running: { startedAt: T0 } } }] } } }, { subresource: 'status' });
  return vmi;
}

async function pendingMigration(ns: string): Promise<VirtualMachineInstanceMigration> {
  const m = await ctx.kube.create(MIGRATIONS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name: 'mig', namespace: ns, labels: { 'kubevirt.io/vmi-name': 'vm' }, finalizers: ['kubevirt.io/migrationJobFinalize'] },
    spec: { vmiName: 'vm' },
  });
  return ctx.kube.update(MIGRATIONS, { ...m, status: { phase: 'Pending', phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: T0 }], migrationState: { sourceNode: `node-${ns}`, sourcePod: 'virt-launcher-src' } } } as VirtualMachineInstanceMigration, { subresource: 'status' });
}

/** Creates `objects` in `ns` (claims Bound), answers them as read back (with their UIDs). */
async function createObjects(ns: string, objects: ClusterObject[]): Promise<ClusterObject[]> {
  await ctx.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: (objects.find((o) => o.kind === 'Namespace')?.metadata?.labels) ?? {} } });
  const out: ClusterObject[] = [];
  for (const o of objects) {
    if (o.kind === 'PersistentVolumeClaim') out.push((await ctx.kube.create(PVCS, { ...o, metadata: { ...o.metadata, namespace: ns } } as never)) as ClusterObject);
    else if (o.kind === 'ResourceQuota') out.push((await ctx.kube.create(RESOURCE_QUOTAS, { ...o, metadata: { ...o.metadata, namespace: ns } } as never)) as ClusterObject);
    else if (o.kind === 'ConfigMap') out.push((await ctx.kube.create(CONFIG_MAPS, { ...o, metadata: { ...o.metadata, namespace: ns } } as never)) as ClusterObject);
    else out.push({ ...o, metadata: { ...o.metadata, name: ns } });
  }
  return out;
}

const pvc = (name: string, volumeMode: string, accessModes: string[]): ClusterObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { volumeMode, accessModes, resources: { requests: { storage: '1Gi' } } } });
const quota = (hard: Record<string, string>): ClusterObject => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard } });

/** What of the compute container the cluster facts decide. */
function factsOf(c: V1Container | undefined): unknown {
  return {
    volumeDevices: c?.volumeDevices,
    volumeMounts: c?.volumeMounts?.filter((m) => m.mountPath.includes('vmi-disks')),
    sharedPaths: c?.env?.find((e) => e.name === 'SHARED_FILESYSTEM_PATHS')?.value,
    limits: c?.resources?.limits,
  };
}

describe('the migration target pod is rendered with the launcher pod\'s cluster facts', () => {
  const table: { name: string; objects: ClusterObject[]; volumes: NonNullable<VirtualMachineInstance['spec']['volumes']>; want: (c: V1Container) => void }[] = [
    {
      name: 'a Block claim → a device, an RWX Filesystem claim → a shared path',
      objects: [pvc('blk', 'Block', ['ReadWriteMany']), pvc('shared', 'Filesystem', ['ReadWriteMany'])],
      volumes: [{ name: 'blk', persistentVolumeClaim: { claimName: 'blk' } }, { name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }],
      want: (c) => {
        assert.deepEqual(c.volumeDevices, [{ name: 'blk', devicePath: '/dev/blk' }], 'the Block claim is a device');
        assert.equal(c.env?.find((e) => e.name === 'SHARED_FILESYSTEM_PATHS')?.value, '/var/run/kubevirt-private/vmi-disks/shared');
      },
    },
    {
      name: 'a quota limiting memory and CPU → automatic limits',
      objects: [pvc('shared', 'Filesystem', ['ReadWriteMany']), quota({ 'limits.memory': '10Gi', 'limits.cpu': '10' })],
      volumes: [{ name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }],
      want: (c) => {
        assert.ok(c.resources?.limits?.['memory'], 'a memory limit');
        assert.equal(c.resources?.limits?.['cpu'], '1', 'one CPU per vCPU');
      },
    },
    {
      name: 'a quota limiting memory, the namespace\'s ratio label 1.5',
      objects: [{ kind: 'Namespace', metadata: { labels: { 'alpha.kubevirt.io/auto-memory-limits-ratio': '1.5' } } }, pvc('shared', 'Filesystem', ['ReadWriteMany']), quota({ 'limits.memory': '10Gi' })],
      volumes: [{ name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }],
      want: (c) => assert.ok(c.resources?.limits?.['memory'], 'a memory limit'),
    },
  ];
  table.forEach((row, i) => {
    test(row.name, async () => {
      // arrange
      const ns = `target-facts-${i}`;
      const config = clusterConfigFromKubeVirt(undefined);
      const objects = await createObjects(ns, row.objects);
      const vmi = await runningVmi(ns, row.volumes);
      await pendingMigration(ns);
      // act
      await reconcileMigration(`${ns}/mig`, deps(config));
      // assert
      const targets = (await ctx.kube.list(PODS, ns, { labelSelector: 'kubevirt.io/migrationJobUID' })).items;
      assert.equal(targets.length, 1, 'one target pod');
      const target = targets[0]!.spec!.containers.find((c) => c.name === 'compute')!;
      row.want(target);
      const launcher = renderLauncherPod(vmi, config, renderFactsFromObjects(objects, vmi, config)).spec!.containers.find((c) => c.name === 'compute');
      assert.deepEqual(factsOf(target), factsOf(launcher), 'the target pod\'s volume section and limits are the launcher pod\'s');
    });
  });

  test('a hook sidecar\'s ConfigMap missing: no target pod, a FailedCreate event on the VMI', async () => {
    // arrange
    const ns = 'target-facts-hook';
    const config = clusterConfigFromKubeVirt({ apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { developerConfiguration: { featureGates: ['Sidecar'] } } } });
    await createObjects(ns, [pvc('shared', 'Filesystem', ['ReadWriteMany'])]);
    const hooks = JSON.stringify([{ args: ['--version', 'v1alpha2'], configMap: { name: 'hook-script', key: 'script.sh', hookPath: '/usr/bin/onDefineDomain' } }]);
    await runningVmi(ns, [{ name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }], {}, { 'hooks.kubevirt.io/hookSidecars': hooks });
    await pendingMigration(ns);
    // act
    await reconcileMigration(`${ns}/mig`, deps(config));
    // assert
    assert.equal((await ctx.kube.list(PODS, ns, { labelSelector: 'kubevirt.io/migrationJobUID' })).items.length, 0, 'no target pod while the ConfigMap is missing');
    const events = (await ctx.kube.list(EVENTS, ns)).items as { reason?: string; message?: string }[];
    assert.ok(events.some((e) => e.reason === 'FailedCreate' && e.message?.includes('configmaps "hook-script" not found')), `FailedCreate naming the ConfigMap; got ${JSON.stringify(events.map((e) => e.message))}`);
  });
});

describe('a target pod refused by the namespace\'s quota (KubeVirt\'s migrationRejectedByResourceQuota)', () => {
  test('the refusal marks the migration while Pending; the pod made on a later pass clears it in Scheduling', async () => {
    // arrange: the emulator has no quota admission (a real API server refuses the pod): its
    // refusal is played by the client, with the message the real one gives
    const ns = 'target-quota-refused';
    const config = clusterConfigFromKubeVirt(undefined);
    await createObjects(ns, [pvc('shared', 'Filesystem', ['ReadWriteMany'])]);
    await runningVmi(ns, [{ name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }]);
    await pendingMigration(ns);
    const d = deps(config);
    const refusing: MigrationDeps = {
      ...d,
      kube: {
        ...d.kube,
        create: async <T extends KubeObject>(res: Resource<T>, obj: T): Promise<T> => {
          if (res === (PODS as unknown)) throw new Error('pods "virt-launcher-vm-x" is forbidden: exceeded quota: q, requested: limits.memory=1Gi, used: limits.memory=0, limited: limits.memory=512Mi');
          return d.kube.create(res, obj);
        },
      },
    };
    // act
    const outcome = await reconcileMigration(`${ns}/mig`, refusing);
    // assert
    const refused = (await ctx.kube.get(MIGRATIONS, ns, 'mig'))!;
    assert.equal(refused.status?.phase, 'Pending');
    assert.deepEqual(refused.status?.conditions?.map((c) => [c.type, c.status, typeof c.lastProbeTime]), [['migrationRejectedByResourceQuota', 'True', 'string']], 'marked once, with its probe time');
    assert.equal(outcome.kind, 'requeue', 'looked at again (and on a quota change: functions/migration/wakes.ts)');

    // act: the quota allows it now
    await reconcileMigration(`${ns}/mig`, d);
    // assert
    const scheduled = (await ctx.kube.get(MIGRATIONS, ns, 'mig'))!;
    assert.equal((await ctx.kube.list(PODS, ns, { labelSelector: 'kubevirt.io/migrationJobUID' })).items.length, 1, 'the target pod');
    assert.equal(scheduled.status?.phase, 'Scheduling');
    assert.deepEqual(scheduled.status?.conditions ?? [], [], 'the condition goes in Scheduling');
  });
});
