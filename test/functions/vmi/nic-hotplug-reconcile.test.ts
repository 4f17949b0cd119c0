/**
 * NIC hotplug, the VMI side, through the VMI reconcile and the simulated nodes (reference-vm-vmi-depth
 * §6, §7): a bridge interface + Multus network patched into a running VMI's spec (as the VM
 * controller does) → the VMI controller rewrites the launcher pod's `k8s.v1.cni.cncf.io/networks`
 * (one JSON patch add), the kubelet (playing Multus' dynamic-networks controller) refreshes the
 * network status, the VMI reports it (`multus-status`), virt-handler plugs it into the domain;
 * `MigrationRequired=False AutoMigrationPending` while it is pending, removed once plugged. Set
 * `absent`: the annotation loses it, Multus detaches it, and it leaves `status.interfaces`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { AS_PRODUCT } from '../../support/as-product.ts';
import { virtApiClient } from '../../support/virt-api-client.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { hashedPodInterfaceName } from '../../../shared/template/render-metadata.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { NS, vmiManifest } from '../../e2e/support.ts';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ nodes: 1, timings: { podStartupMs: 20, vmiBootMs: 20, vmiShutdownMs: 20, vmiHotplugMs: 20 } });
});
after(() => sandbox.stop());

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const STATUS = 'k8s.v1.cni.cncf.io/network-status';

test('a bridge NIC plugged into a running VMI and unplugged again, through the VMI reconcile and the simulated node', async () => {
  // arrange
  // The NIC is plugged as virt-api's addinterface does it: a user's own VMI spec patch is refused.
  const kube = virtApiClient(sandbox.apiServer.kubeConfig('test'));
  const state = openSqliteState();
  const deps: VmiDeps = { kube: createKubeClient(sandbox.apiServer.kubeConfig('vmi-controller'), AS_PRODUCT), expectations: state.expectations, leases: state.leases, now: Date.now, log: { info: () => undefined, warn: () => undefined }, clusterConfig: async () => clusterConfigFromKubeVirt() };
  const base = vmiManifest('nic-vmi');
  base.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {} }];
  base.spec.networks = [{ name: 'default', pod: {} }];
  await kube.create(VMIS, base);
  const reconcileUntil = async (what: string, want: (v: VirtualMachineInstance | undefined) => boolean) => {
    for (let i = 0; i < 300; i++) {
      await reconcileVmi(`${NS}/nic-vmi`, deps).catch(() => undefined);
      const v = await kube.get(VMIS, NS, 'nic-vmi');
      if (want(v)) return v!;
      await sleep(10);
    }
    assert.fail(`timed out: ${what}`);
  };
  const launcher = async (uid: string): Promise<V1Pod> => (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${uid}` })).items[0]!;
  const running = await reconcileUntil('Running', (v) => v?.status?.phase === 'Running' && (v.status.interfaces ?? []).length > 0);
  const uid = running.metadata!.uid!;
  const podName = (await launcher(uid)).metadata!.name!;
  sandbox.apiServer.audit.clear();

  // act: plug (what the VM controller writes)
  await kube.patch(VMIS, NS, 'nic-vmi', {
    type: 'json',
    ops: [
      { op: 'test', path: '/spec/networks', value: running.spec.networks },
      { op: 'add', path: '/spec/networks', value: [...running.spec.networks!, { name: 'sec', multus: { networkName: 'nad1' } }] },
      { op: 'test', path: '/spec/domain/devices/interfaces', value: running.spec.domain.devices.interfaces },
      { op: 'add', path: '/spec/domain/devices/interfaces', value: [...running.spec.domain.devices.interfaces!, { name: 'sec', bridge: {} }] },
    ],
  });
  const plugged = await reconcileUntil('sec in the domain', (v) => (v?.status?.interfaces ?? []).some((i) => i.name === 'sec' && (i.infoSource ?? '').includes('domain')) && !v?.status?.conditions?.some((c) => c.type === 'MigrationRequired'));
  const podPlugged = await launcher(uid);
  const plugWrites = sandbox.apiServer.audit.query({ identity: 'vmi-controller' });

  // act: unplug
  const ifaces = plugged.spec.domain.devices.interfaces!;
  await kube.patch(VMIS, NS, 'nic-vmi', { type: 'json', ops: [{ op: 'add', path: `/spec/domain/devices/interfaces/${ifaces.findIndex((i) => i.name === 'sec')}/state`, value: 'absent' }] });
  const unplugged = await reconcileUntil('sec gone from status.interfaces', (v) => !(v?.status?.interfaces ?? []).some((i) => i.name === 'sec'));
  const podUnplugged = await launcher(uid);

  // assert
  const h = hashedPodInterfaceName('sec');
  assert.equal(podPlugged.metadata?.name, podName, 'the same launcher pod');
  assert.deepEqual(JSON.parse(podPlugged.metadata!.annotations![NETWORKS]!), [{ name: 'nad1', namespace: NS, interface: h }]);
  assert.deepEqual((JSON.parse(podPlugged.metadata!.annotations![STATUS]!) as { interface: string }[]).map((e) => e.interface), ['eth0', h]);
  const sec = plugged.status!.interfaces!.find((i) => i.name === 'sec')!;
  assert.equal(sec.podInterfaceName, h);
  assert.equal(sec.infoSource, 'domain, guest-agent, multus-status');
  const podPatches = plugWrites.filter((e) => e.resource === 'pods' && e.verb === 'patch' && e.name === podName && !e.subresource);
  assert.equal(podPatches.length, 1, 'one annotation write for the plug');
  const pending = plugWrites.some((e) => e.resource === 'virtualmachineinstances' && ((e.object as unknown as VirtualMachineInstance).status?.conditions ?? []).some((c) => c.type === 'MigrationRequired' && c.status === 'False' && c.reason === 'AutoMigrationPending'));
  assert.ok(pending, 'MigrationRequired=False AutoMigrationPending while the pod had not got it');
  assert.equal(podUnplugged.metadata?.annotations?.[NETWORKS], '', 'the annotation without the absent network');
  assert.deepEqual((JSON.parse(podUnplugged.metadata!.annotations![STATUS]!) as { interface: string }[]).map((e) => e.interface), ['eth0']);
  assert.equal(unplugged.status?.conditions?.some((c) => c.type === 'MigrationRequired'), false);
  await state.close();
});
