/**
 * The pod interface a VM without interfaces or networks starts with follows the cluster's
 * `network.defaultNetworkInterface` (KubeVirt's SetDefaultNetworkInterface in the VM controller's
 * start, issue 38 item 6); a default the cluster refuses (bridge with
 * `permitBridgeInterfaceOnPodNetwork: false`) fails the start with KubeVirt's message. One VM
 * started against the emulator API server per row.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeVirt } from '../../../shared/api/index.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { NS, sandboxPerFile, vmManifest } from './support.ts';

const ctx = sandboxPerFile();

const kubevirt = (network: Record<string, unknown>): KubeVirt => ({ apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { network } } }) as KubeVirt;

describe('the default pod interface follows the cluster\'s networkInterface', () => {
  const table: { name: string; network: Record<string, unknown>; interfaces?: unknown; failure?: string; autoattach?: false }[] = [
    { name: 'no setting: bridge', network: {}, interfaces: [{ name: 'default', bridge: {} }] },
    { name: 'masquerade', network: { defaultNetworkInterface: 'masquerade' }, interfaces: [{ name: 'default', masquerade: {} }] },
    { name: 'bridge, not permitted on the pod network: the start fails', network: { defaultNetworkInterface: 'bridge', permitBridgeInterfaceOnPodNetwork: false }, failure: 'Failure while starting VMI: bridge interface is not enabled in kubevirt-config' },
    { name: 'autoattachPodInterface false: no interface whatever the setting', network: { defaultNetworkInterface: 'masquerade' }, autoattach: false },
  ];
  table.forEach((row, i) => {
    test(row.name, async () => {
      // arrange
      const name = `netdef-${i}`;
      const vm = vmManifest(name, { runStrategy: 'Always' });
      if (row.autoattach === false) vm.spec.template.spec!.domain.devices.autoattachPodInterface = false;
      await ctx.h.kube.create(VMS, vm);
      const config = clusterConfigFromKubeVirt(kubevirt(row.network));
      const deps = { ...ctx.h.deps, clusterConfig: async () => config };
      // act
      for (let pass = 0; pass < 4; pass++) await reconcileVm(`${NS}/${name}`, deps).catch(() => undefined);
      // assert
      const vmi = await ctx.h.kube.get(VMIS, NS, name);
      if (row.failure) {
        assert.equal(vmi, undefined, 'no VMI');
        const failure = (await ctx.h.kube.get(VMS, NS, name))?.status?.conditions?.find((c) => c.type === 'Failure');
        assert.equal(failure?.message, row.failure);
        return;
      }
      assert.ok(vmi, 'the VMI is created');
      assert.deepEqual(vmi.spec.domain.devices.interfaces, row.interfaces);
      assert.deepEqual(vmi.spec.networks, row.interfaces ? [{ name: 'default', pod: {} }] : undefined);
    });
  });
});
