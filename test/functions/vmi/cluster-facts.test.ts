/**
 * The facts the VMI controller reads from the cluster and hands the renderer (docs/fidelity.md,
 * found by the differential corpus): each claim's volume mode and access modes, the namespace's
 * ResourceQuotas and labels (automatic limits), a hook sidecar's ConfigMap, the Multus networks'
 * NetworkAttachmentDefinitions (ExternalNetResourceInjection off), and a backend-storage
 * lookup that works for VMI names no label value can hold. One reconcile pass against the emulator API server each.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiServerPerFile } from '../../support/api-server.ts';
import type { V1Container, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import type { KubeVirt, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { CONFIG_MAPS, NAMESPACES, NETWORK_ATTACHMENT_DEFINITIONS, PODS, PVCS, RESOURCE_QUOTAS, VMIS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { vmiManifest } from '../../e2e/support.ts';

const ctx = apiServerPerFile();

function deps(kv?: KubeVirt): VmiDeps {
  const config = clusterConfigFromKubeVirt(kv);
  const state = openSqliteState();
  return { kube: createKubeClient(ctx.server.kubeConfig('vmi-controller')), expectations: state.expectations, leases: state.leases, clusterConfig: async () => config, now: () => Date.now(), log: silentLogger };
}

async function namespace(name: string, labels?: Record<string, string>): Promise<void> {
  await ctx.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}) } });
}

function claim(ns: string, name: string, volumeMode: 'Block' | 'Filesystem', accessModes: string[]): V1PersistentVolumeClaim {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: ns }, spec: { volumeMode, accessModes, resources: { requests: { storage: '1Gi' } } } };
}

/** Creates the VMI in `ns`, runs one reconcile pass, answers the compute container of the pod it made. */
async function computeOf(ns: string, vmi: VirtualMachineInstance, d: VmiDeps = deps()): Promise<V1Container> {
  vmi.metadata!.namespace = ns;
  const created = await ctx.kube.create(VMIS, vmi);
  await reconcileVmi(`${ns}/${vmi.metadata?.name ?? ''}`, d);
  const pods = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` });
  assert.equal(pods.items.length, 1, 'one launcher pod');
  return pods.items[0]!.spec!.containers[0]!;
}

describe('the VMI controller reads what the renderer needs', () => {
  test('claims: Block → a device, RWX Filesystem → a shared path, an ephemeral Block claim → a device', async () => {
    // arrange
    const ns = 'facts-claims';
    await namespace(ns);
    for (const c of [claim(ns, 'blk', 'Block', ['ReadWriteOnce']), claim(ns, 'shared', 'Filesystem', ['ReadWriteMany']), claim(ns, 'base', 'Block', ['ReadOnlyMany'])]) await ctx.kube.create(PVCS, c);
    const vmi = vmiManifest('claims');
    vmi.spec.domain.devices.disks!.push({ name: 'blk', disk: {} }, { name: 'shared', disk: {} }, { name: 'eph', disk: {} });
    vmi.spec.volumes!.push({ name: 'blk', persistentVolumeClaim: { claimName: 'blk' } }, { name: 'shared', persistentVolumeClaim: { claimName: 'shared' } }, { name: 'eph', ephemeral: { persistentVolumeClaim: { claimName: 'base' } } });
    // act
    const c = await computeOf(ns, vmi);
    // assert
    assert.deepEqual(c.volumeDevices, [{ name: 'blk', devicePath: '/dev/blk' }, { name: 'eph', devicePath: '/dev/eph' }]);
    assert.equal(c.env?.find((e) => e.name === 'SHARED_FILESYSTEM_PATHS')?.value, '/var/run/kubevirt-private/vmi-disks/shared');
    assert.ok(!c.volumeMounts?.some((m) => m.name === 'blk' || m.name === 'eph'), 'a Block claim is not mounted');
  });

  const quotaTable: { name: string; hard: Record<string, string> | undefined; labels?: Record<string, string>; kv?: KubeVirt; memory?: string; cpu?: string }[] = [
    { name: 'no quota: no limits', hard: undefined },
    { name: 'a quota on requests only: no limits', hard: { 'requests.memory': '10Gi' } },
    { name: 'limits.memory: twice the request', hard: { 'limits.memory': '10Gi' }, memory: '852480Ki' },
    { name: 'limits.memory and the namespace ratio 1.5', hard: { 'limits.memory': '10Gi' }, labels: { 'alpha.kubevirt.io/auto-memory-limits-ratio': '1.5' }, memory: '639360Ki' },
    { name: 'limits.cpu: one CPU per vCPU', hard: { 'limits.cpu': '10' }, cpu: '1' },
    {
      name: 'no quota, the cluster selector matches the namespace: a CPU limit',
      hard: undefined,
      labels: { autocpu: 'on' },
      kv: { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { autoCPULimitNamespaceLabelSelector: { matchLabels: { autocpu: 'on' } } } } },
      cpu: '1',
    },
  ];
  for (const [i, row] of quotaTable.entries()) {
    test(`automatic limits: ${row.name}`, async () => {
      // arrange
      const ns = `facts-quota-${i}`;
      await namespace(ns, row.labels);
      if (row.hard) await ctx.kube.create(RESOURCE_QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: ns }, spec: { hard: row.hard } });
      // act
      const c = await computeOf(ns, vmiManifest('quota'), deps(row.kv));
      // assert
      assert.equal(c.resources?.limits?.['memory'], row.memory, 'memory limit');
      assert.equal(c.resources?.limits?.['cpu'], row.cpu, 'cpu limit');
    });
  }

  test('a hook sidecar\'s ConfigMap: missing → no pod and a FailedCreate sync error; present → the pod', async () => {
    // arrange
    const ns = 'facts-hook-cm';
    await namespace(ns);
    const vmi = vmiManifest('hooked');
    vmi.metadata!.namespace = ns;
    vmi.metadata!.annotations = { 'hooks.kubevirt.io/hookSidecars': JSON.stringify([{ configMap: { name: 'hook-script', key: 'run.sh', hookPath: '/usr/bin/onDefineDomain' } }]) };
    const created = await ctx.kube.create(VMIS, vmi);
    const d = deps();
    // act
    await reconcileVmi(`${ns}/hooked`, d).catch(() => undefined);
    const before = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` });
    const sync = (await ctx.kube.get(VMIS, ns, 'hooked'))?.status?.conditions?.find((c) => c.type === 'Synchronized');
    await ctx.kube.create(CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hook-script', namespace: ns }, data: { 'run.sh': '#!/bin/sh' } });
    await reconcileVmi(`${ns}/hooked`, d);
    const after = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` });
    // assert
    assert.equal(before.items.length, 0, 'no pod while the ConfigMap is missing');
    assert.equal(sync?.reason, 'FailedCreate');
    assert.equal(sync?.message, 'failed to render launch manifest: configmaps "hook-script" not found');
    assert.equal(after.items.length, 1, 'the pod once it exists');
  });

  test("ExternalNetResourceInjection off: a Multus network's NAD missing → FailedCreate with KubeVirt's words, no pod; present → its resourceName requested once per network", async () => {
    // arrange
    const ns = 'facts-nad';
    await namespace(ns);
    const kv: KubeVirt = { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { developerConfiguration: { disabledFeatureGates: ['ExternalNetResourceInjection'] } } } };
    const vmi = vmiManifest('sriov-a');
    vmi.metadata!.namespace = ns;
    vmi.spec.networks = [...(vmi.spec.networks ?? []), { name: 'sriov1', multus: { networkName: 'sriov-net' } }, { name: 'sriov2', multus: { networkName: `${ns}/sriov-net` } }, { name: 'plain', multus: { networkName: 'plain-net' } }];
    vmi.spec.domain.devices.interfaces = [...(vmi.spec.domain.devices.interfaces ?? []), { name: 'sriov1', sriov: {} }, { name: 'sriov2', sriov: {} }, { name: 'plain', bridge: {} }];
    const created = await ctx.kube.create(VMIS, vmi);
    const d = deps(kv);
    const nad = (name: string, annotations: Record<string, string> = {}) => ctx.kube.create(NETWORK_ATTACHMENT_DEFINITIONS, { apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name, namespace: ns, annotations }, spec: { config: '{}' } });
    // act
    await reconcileVmi(`${ns}/sriov-a`, d).catch(() => undefined);
    const before = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` });
    const sync = (await ctx.kube.get(VMIS, ns, 'sriov-a'))?.status?.conditions?.find((c) => c.type === 'Synchronized');
    await nad('sriov-net', { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_netdevice' });
    await nad('plain-net');
    await reconcileVmi(`${ns}/sriov-a`, d);
    const after = await ctx.kube.list(PODS, ns, { labelSelector: `${CREATED_BY_LABEL}=${created.metadata?.uid ?? ''}` });
    // assert
    assert.equal(before.items.length, 0, 'no pod while the NAD is missing');
    assert.equal(sync?.reason, 'FailedCreate');
    assert.equal(sync?.message, `failed to render launch manifest: failed to locate network attachment definition ${ns}/sriov-net`);
    const compute = after.items[0]!.spec!.containers[0]!;
    assert.equal(compute.resources?.requests?.['intel.com/sriov_netdevice'], '2', 'two networks on the resource: two devices');
    assert.equal(compute.resources?.limits?.['intel.com/sriov_netdevice'], '2');
  });

  test('ExternalNetResourceInjection on (the default): no NAD is read, nothing is injected', async () => {
    // arrange
    const ns = 'facts-nad-on';
    await namespace(ns);
    const vmi = vmiManifest('sriov-b');
    vmi.spec.networks = [...(vmi.spec.networks ?? []), { name: 'sriov1', multus: { networkName: 'nowhere' } }];
    vmi.spec.domain.devices.interfaces = [...(vmi.spec.domain.devices.interfaces ?? []), { name: 'sriov1', sriov: {} }];
    // act
    const c = await computeOf(ns, vmi);
    // assert
    assert.deepEqual(Object.keys(c.resources?.requests ?? {}).filter((k) => k.includes('/')), []);
  });

  test('a VMI name longer than a label value gets its launcher pod (the backend-storage lookup needs no selector)', async () => {
    // arrange
    const ns = 'facts-long-name';
    await namespace(ns);
    const name = `vm-${'x'.repeat(80)}`;
    // act
    const c = await computeOf(ns, vmiManifest(name));
    // assert
    assert.ok(c.args?.includes(name));
  });
});
