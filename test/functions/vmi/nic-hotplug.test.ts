/**
 * NIC hotplug, the VMI side, as decision tables (reference-vm-vmi-depth §6 "On a ready, non-temp
 * pod, every pass", §7 `MigrationRequired`): the launcher pod's regenerated Multus annotation and
 * `kubevirt.io/network-info`, and the network migration evaluator.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { Interface, Network, VirtualMachineInstance, VirtualMachineInstanceCondition } from '../../../shared/api/index.ts';
import { activePodAnnotations, multusAnnotationUpdate, networkInfoAnnotation, podAnnotationOps } from '../../../shared/network/pod-annotations.ts';
import { migrationRequiredRequeueSeconds, networkMigrationRequirement, syncMigrationRequired } from '../../../functions/vmi/migration-required.ts';
import { hashedPodInterfaceName } from '../../../shared/template/render-metadata.ts';

const NS = 'ns1';
const h = hashedPodInterfaceName('sec');
const podIface: Interface = { name: 'default', masquerade: {} };
const podNet: Network = { name: 'default', pod: {} };
const sec: Interface = { name: 'sec', bridge: {} };
const secNet: Network = { name: 'sec', multus: { networkName: 'nad1' } };
const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const STATUS = 'k8s.v1.cni.cncf.io/network-status';

function vmi(interfaces: Interface[], networks: Network[], statusIfaces: object[] = [{ name: 'default' }], conditions: VirtualMachineInstanceCondition[] = []): VirtualMachineInstance {
  return { metadata: { name: 'v', namespace: NS }, spec: { domain: { devices: { interfaces } }, networks }, status: { phase: 'Running', interfaces: statusIfaces, conditions } } as VirtualMachineInstance;
}
function pod(annotations: Record<string, string>): V1Pod {
  return { metadata: { name: 'virt-launcher-v-x', namespace: NS, annotations: { 'descheduler.alpha.kubernetes.io/request-evict-only': '', ...annotations } } };
}
const netStatus = (...entries: object[]) => JSON.stringify([{ name: 'k8s-pod-network', interface: 'eth0', default: true }, ...entries]);
const secAnnotation = (iface = h) => JSON.stringify([{ name: 'nad1', namespace: NS, interface: iface }]);

describe('the launcher pod annotations on a ready pod', () => {
  test('table: the Multus annotation regenerated for a hot-plug or unplug, only when it differs', () => {
    const cases: { name: string; vmi: VirtualMachineInstance; pod: V1Pod; want: string | undefined }[] = [
      { name: 'nothing to plug', vmi: vmi([podIface, sec], [podNet, secNet], [{ name: 'default' }, { name: 'sec' }]), pod: pod({ [NETWORKS]: secAnnotation() }), want: undefined },
      { name: 'a hot-plug: the new network, hashed (no ordinal name on the pod)', vmi: vmi([podIface, sec], [podNet, secNet]), pod: pod({ [STATUS]: netStatus() }), want: secAnnotation() },
      { name: 'a hot-plug already annotated: no write', vmi: vmi([podIface, sec], [podNet, secNet]), pod: pod({ [NETWORKS]: secAnnotation(), [STATUS]: netStatus() }), want: undefined },
      { name: 'a hot-plug on an ordinal-named pod: net<N> names', vmi: vmi([podIface, { name: 'old', bridge: {} }, sec], [podNet, { name: 'old', multus: { networkName: 'nad0' } }, secNet]), pod: pod({ [STATUS]: netStatus({ name: `${NS}/nad0`, interface: 'net1' }) }), want: JSON.stringify([{ name: 'nad0', namespace: NS, interface: 'net1' }, { name: 'nad1', namespace: NS, interface: 'net2' }]) },
      { name: 'an unplug: the absent one left out (an empty list)', vmi: vmi([podIface, { ...sec, state: 'absent' }], [podNet, secNet], [{ name: 'default' }, { name: 'sec' }]), pod: pod({ [NETWORKS]: secAnnotation() }), want: '' },
      { name: 'an SR-IOV interface not yet in status is not annotated', vmi: vmi([podIface, { name: 'sec', sriov: {} }, { name: 'b', bridge: {} }], [podNet, secNet, { name: 'b', multus: { networkName: 'other/nad2' } }]), pod: pod({}), want: JSON.stringify([{ name: 'nad2', namespace: 'other', interface: hashedPodInterfaceName('b') }]) },
      { name: 'the MAC requested', vmi: vmi([podIface, { ...sec, macAddress: '02:00:00:00:00:01' }], [podNet, secNet]), pod: pod({}), want: JSON.stringify([{ name: 'nad1', namespace: NS, mac: '02:00:00:00:00:01', interface: h }]) },
    ];
    for (const c of cases) {
      // act
      const got = multusAnnotationUpdate(c.vmi, c.pod);
      // assert
      assert.equal(got, c.want, c.name);
    }
  });

  test('network-info: SR-IOV interfaces Multus reports, sorted by network, empties omitted', () => {
    // arrange
    const v = vmi([podIface, { name: 'sb', sriov: {} }, { name: 'sa', sriov: {} }, sec], [podNet, { name: 'sb', multus: { networkName: 'n2' } }, { name: 'sa', multus: { networkName: 'n1' } }, secNet]);
    const p = pod({ [STATUS]: netStatus({ name: `${NS}/n2`, interface: hashedPodInterfaceName('sb'), mac: 'aa', 'device-info': { type: 'pci', pci: { 'pci-address': '0000:65:00.2' } } }, { name: `${NS}/n1`, interface: hashedPodInterfaceName('sa'), mtu: 9000 }) });
    // act
    const got = networkInfoAnnotation(v, p);
    const none = networkInfoAnnotation(vmi([podIface, sec], [podNet, secNet]), p);
    // assert
    assert.equal(got, JSON.stringify({ interfaces: [{ network: 'sa', mtu: 9000 }, { network: 'sb', deviceInfo: { type: 'pci', pci: { 'pci-address': '0000:65:00.2' } }, mac: 'aa' }] }));
    assert.equal(none, undefined, 'no SR-IOV interface');
  });

  test('only the keys that differ, each written by an add', () => {
    // arrange
    const v = vmi([podIface, sec], [podNet, secNet]);
    const p = pod({ [STATUS]: netStatus() });
    // act
    const changes = activePodAnnotations(v, p);
    const ops = podAnnotationOps(p, changes);
    // assert
    assert.deepEqual(changes, { [NETWORKS]: secAnnotation() }, 'request-evict-only is there already');
    assert.deepEqual(ops, [{ op: 'add', path: '/metadata/annotations/k8s.v1.cni.cncf.io~1networks', value: secAnnotation() }]);
  });
});

describe('MigrationRequired (the network migration evaluator)', () => {
  const NOW = '2026-03-01T12:00:30Z';
  const attached = pod({ [STATUS]: netStatus({ name: `${NS}/nad1`, interface: h }) });
  const inPod = { name: 'sec', infoSource: 'multus-status', podInterfaceName: h };
  const inDomain = { name: 'sec', infoSource: 'domain, guest-agent, multus-status', podInterfaceName: h };
  const cond = (status: string, since: string, reason = status === 'True' ? 'AutoMigrationDueToLiveUpdate' : 'AutoMigrationPending') => ({ type: 'MigrationRequired', status, reason, message: '', lastProbeTime: null, lastTransitionTime: since }) as VirtualMachineInstanceCondition;

  test('table: what the secondary interfaces ask for', () => {
    const cases: { name: string; vmi: VirtualMachineInstance; want: string }[] = [
      { name: 'all plugged', vmi: vmi([podIface, sec], [podNet, secNet], [{ name: 'default' }, inDomain]), want: 'none' },
      { name: 'a bridge hot-plug not in status: pending', vmi: vmi([podIface, sec], [podNet, secNet]), want: 'pending' },
      { name: 'an SR-IOV hot-plug not in status: now', vmi: vmi([podIface, { name: 'sec', sriov: {} }], [podNet, secNet]), want: 'now' },
      { name: 'absent, Multus still reports it, the domain not: pending', vmi: vmi([podIface, { ...sec, state: 'absent' }], [podNet, secNet], [{ name: 'default' }, inPod]), want: 'pending' },
      { name: 'absent, still in the domain: none', vmi: vmi([podIface, { ...sec, state: 'absent' }], [podNet, secNet], [{ name: 'default' }, inDomain]), want: 'none' },
      { name: 'the pod attached to another NAD than the spec names: now', vmi: vmi([podIface, sec], [podNet, { name: 'sec', multus: { networkName: 'nad2' } }], [{ name: 'default' }, inDomain]), want: 'now' },
      { name: 'the NAD named with its namespace: the same', vmi: vmi([podIface, sec], [podNet, { name: 'sec', multus: { networkName: `${NS}/nad1` } }], [{ name: 'default' }, inDomain]), want: 'none' },
    ];
    for (const c of cases) assert.equal(networkMigrationRequirement(c.vmi, attached), c.want, c.name);
  });

  test('table: the condition: True, False (True after 15 s), removed, True kept, nothing while migrating; the 10 s re-evaluation', () => {
    const pendingVmi = (conditions: VirtualMachineInstanceCondition[] = [], extra: object = {}) => ({ ...vmi([podIface, sec], [podNet, secNet], [{ name: 'default' }], conditions), ...extra }) as VirtualMachineInstance;
    const migrating = { status: { phase: 'Running', interfaces: [{ name: 'default' }], conditions: [], migrationState: { startTimestamp: '2026-03-01T12:00:00Z' } } };
    const cases: { name: string; vmi: VirtualMachineInstance; want: [string, string, string] | undefined; requeue: number | undefined }[] = [
      { name: 'pending, new: False AutoMigrationPending', vmi: pendingVmi(), want: ['False', 'AutoMigrationPending', NOW], requeue: 10 },
      { name: 'pending, False for 10 s: stays False (its time kept)', vmi: pendingVmi([cond('False', '2026-03-01T12:00:20Z')]), want: ['False', 'AutoMigrationPending', '2026-03-01T12:00:20Z'], requeue: 10 },
      { name: 'pending, False for 16 s: True', vmi: pendingVmi([cond('False', '2026-03-01T12:00:14Z')]), want: ['True', 'AutoMigrationDueToLiveUpdate', NOW], requeue: undefined },
      { name: 'now: True', vmi: vmi([podIface, { name: 'sec', sriov: {} }], [podNet, secNet]), want: ['True', 'AutoMigrationDueToLiveUpdate', NOW], requeue: undefined },
      { name: 'none, a False one: removed', vmi: vmi([podIface, sec], [podNet, secNet], [{ name: 'default' }, inDomain], [cond('False', '2026-03-01T12:00:20Z')]), want: undefined, requeue: undefined },
      { name: 'none, a True one: removed', vmi: vmi([podIface, sec], [podNet, secNet], [{ name: 'default' }, inDomain], [cond('True', '2026-03-01T12:00:20Z')]), want: undefined, requeue: undefined },
      { name: 'pending, a True one: kept', vmi: pendingVmi([cond('True', '2026-03-01T12:00:20Z')]), want: ['True', 'AutoMigrationDueToLiveUpdate', '2026-03-01T12:00:20Z'], requeue: undefined },
      { name: 'migrating: nothing', vmi: pendingVmi([], migrating), want: undefined, requeue: undefined },
    ];
    for (const c of cases) {
      // arrange
      const v = structuredClone(c.vmi);
      // act
      syncMigrationRequired(v, v.status!, attached, NOW);
      // assert
      const got = v.status?.conditions?.find((x) => x.type === 'MigrationRequired');
      assert.deepEqual(got ? [got.status, got.reason, got.lastTransitionTime] : undefined, c.want, c.name);
      assert.equal(migrationRequiredRequeueSeconds(v), c.requeue, `${c.name}: requeue`);
    }
  });
});
