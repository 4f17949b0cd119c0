/**
 * SR-IOV network info on the migration target pod (functions/migration/target-network-info.ts,
 * KubeVirt's `updateTargetPodNetworkInfo`): the target pod gets `kubevirt.io/network-info` as the
 * VMI controller renders it for the source pod (shared/network/pod-annotations.ts), built from the
 * target's own Multus network status — the VF allocated on the target node.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import { NETWORK_STATUS_ANNOTATION } from '../../../shared/network/network-status.ts';
import { activePodAnnotations } from '../../../shared/network/pod-annotations.ts';
import { syncTargetPodNetworkInfo } from '../../../functions/migration/target-network-info.ts';
import type { MigrationDeps } from '../../../functions/migration/deps.ts';

const NS = 'default';
const INFO = 'kubevirt.io/network-info';

function vmi(interfaces: object[], networks: object[]): VirtualMachineInstance {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'sr', namespace: NS }, spec: { domain: { devices: { interfaces } }, networks } } as unknown as VirtualMachineInstance;
}
const pci = (address: string) => ({ type: 'pci', version: '1.1.0', pci: { 'pci-address': address } });
function pod(name: string, statuses: object[], annotations: Record<string, string> = {}): V1Pod {
  return { metadata: { name, namespace: NS, annotations: { [NETWORK_STATUS_ANNOTATION]: JSON.stringify(statuses), ...annotations } } };
}
const DEFAULT_NET = { name: 'k8s-pod-network', interface: 'eth0', default: true };

/** A kube whose patch records the ops and answers the pod as patched. */
function recorder(): { deps: Pick<MigrationDeps, 'kube'>; patches: { name: string; ops: JsonPatchOperation[] }[] } {
  const patches: { name: string; ops: JsonPatchOperation[] }[] = [];
  const kube = {
    patch: async (_res: unknown, _ns: string | undefined, name: string, p: { type: string; ops?: JsonPatchOperation[] }) => {
      patches.push({ name, ops: p.ops ?? [] });
      return { metadata: { name } };
    },
  } as unknown as MigrationDeps['kube'];
  return { deps: { kube }, patches };
}

describe('the target pod network-info', () => {
  const SRIOV_VMI = vmi([{ name: 'default', masquerade: {} }, { name: 'vf', sriov: {} }], [{ name: 'default', pod: {} }, { name: 'vf', multus: { networkName: 'sriov-net' } }]);
  const SOURCE = pod('virt-launcher-src', [DEFAULT_NET, { name: `${NS}/sriov-net`, interface: 'net1', mac: '02:00:00:00:00:01', 'device-info': pci('0000:01:00.2') }]);
  const TARGET = pod('virt-launcher-tgt', [DEFAULT_NET, { name: `${NS}/sriov-net`, interface: 'net1', mac: '02:00:00:00:00:01', 'device-info': pci('0000:3b:02.5') }]);

  test("rendered as the source pod's, from the target's own VF", async () => {
    // arrange
    const sourceInfo = activePodAnnotations(SRIOV_VMI, SOURCE)[INFO];
    const { deps, patches } = recorder();
    // act
    await syncTargetPodNetworkInfo(SRIOV_VMI, TARGET, {}, deps);
    // assert
    assert.equal(patches.length, 1, 'one patch of the target pod');
    assert.equal(patches[0]?.name, 'virt-launcher-tgt');
    const op = patches[0]?.ops.find((o) => o.path === '/metadata/annotations/kubevirt.io~1network-info');
    assert.ok(op && 'value' in op, `network-info added: ${JSON.stringify(patches[0]?.ops)}`);
    assert.equal(op.value, sourceInfo?.replace('0000:01:00.2', '0000:3b:02.5'), 'the same rendering, the target PCI address');
    assert.deepEqual(JSON.parse(op.value as string), { interfaces: [{ network: 'vf', deviceInfo: pci('0000:3b:02.5'), mac: '02:00:00:00:00:01' }] });
  });

  const cases: { name: string; vmi: VirtualMachineInstance; target: V1Pod; bindings?: Record<string, { downwardAPI?: string }>; patched: boolean }[] = [
    { name: 'no SR-IOV interface: no patch', vmi: vmi([{ name: 'default', masquerade: {} }], [{ name: 'default', pod: {} }]), target: TARGET, patched: false },
    { name: 'already annotated with the same value: no patch', vmi: SRIOV_VMI, target: pod('t', [DEFAULT_NET, { name: `${NS}/sriov-net`, interface: 'net1', mac: '02:00:00:00:00:01', 'device-info': pci('0000:3b:02.5') }], { [INFO]: JSON.stringify({ interfaces: [{ network: 'vf', deviceInfo: pci('0000:3b:02.5'), mac: '02:00:00:00:00:01' }] }) }), patched: false },
    { name: 'the VF not in the network status yet: no patch', vmi: SRIOV_VMI, target: pod('t', [DEFAULT_NET]), patched: false },
    { name: 'a binding plugin with downwardAPI device-info counts as SR-IOV does', vmi: vmi([{ name: 'b', binding: { name: 'vdpa' } }], [{ name: 'b', multus: { networkName: 'vdpa-net' } }]), target: pod('t', [DEFAULT_NET, { name: `${NS}/vdpa-net`, interface: 'net1', 'device-info': pci('0000:5e:00.1') }]), bindings: { vdpa: { downwardAPI: 'device-info' } }, patched: true },
    { name: 'a binding plugin without it does not', vmi: vmi([{ name: 'b', binding: { name: 'vdpa' } }], [{ name: 'b', multus: { networkName: 'vdpa-net' } }]), target: pod('t', [DEFAULT_NET, { name: `${NS}/vdpa-net`, interface: 'net1', 'device-info': pci('0000:5e:00.1') }]), bindings: { vdpa: {} }, patched: false },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      // arrange
      const { deps, patches } = recorder();
      // act
      await syncTargetPodNetworkInfo(c.vmi, c.target, c.bindings ?? {}, deps);
      // assert
      assert.equal(patches.some((p) => p.ops.some((o) => o.path.endsWith('kubevirt.io~1network-info'))), c.patched, JSON.stringify(patches));
    });
  }
});
