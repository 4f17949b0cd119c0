/**
 * The live lane's normalisation and comparison (test/differential/live/), without KubeVirt's
 * binary: what is normalised away, what is kept, and how a verdict reads.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns, formatVerdict } from './live/compare.ts';
import type { ScenarioRun } from './live/lane.ts';
import { normaliseAll, type LiveObject } from './live/normalise.ts';

const UID_VMI = '0a1b2c3d-0000-4000-8000-000000000001';
const UID_POD = '0a1b2c3d-0000-4000-8000-000000000002';

function side(uids: [string, string], suffix: string, qemuTimeout: string, extra: Record<string, unknown> = {}): LiveObject[] {
  return [
    { kind: 'VirtualMachineInstance', metadata: { name: 'life', uid: uids[0], resourceVersion: '17', creationTimestamp: '2026-12-06T09:00:00Z', generation: 3 }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-06T09:00:01Z' }], interfaces: [{ ipAddress: '10.244.0.7', ipAddresses: ['10.244.0.7'] }], ...extra } },
    {
      kind: 'Pod',
      metadata: { name: `virt-launcher-life-${suffix}`, generateName: 'virt-launcher-life-', uid: uids[1], creationTimestamp: '2026-12-06T09:00:00Z', labels: { 'kubevirt.io/created-by': uids[0] }, ownerReferences: [{ kind: 'VirtualMachineInstance', name: 'life', uid: uids[0] }], managedFields: [{ manager: 'x' }] },
      spec: { volumes: [{ name: `kube-api-access-${suffix}` }], containers: [{ name: 'compute', args: ['--qemu-timeout', qemuTimeout] }] },
      status: { podIP: '10.244.0.7', podIPs: [{ ip: '10.244.0.7' }] },
    },
  ];
}

const run = (objects: LiveObject[], events: string[] = [], stuck?: string): ScenarioRun => ({ scenario: 'vmi-lifecycle', objects, events, ...(stuck ? { stuck } : {}) });

describe('live differential: normalisation and verdicts', () => {
  test('UIDs, generated names, times, resource versions, IPs, the token volume and the qemu timeout are normalised; generation is kept', () => {
    // arrange
    const objects = side([UID_VMI, UID_POD], 'x7k2p', '301s');
    // act
    const n = normaliseAll(objects);
    const pod = n.get('Pod/virt-launcher-life-#1') as { metadata: Record<string, unknown>; spec: { volumes: Array<{ name: string }>; containers: Array<{ args: string[] }> }; status: { podIP: string } };
    const vmi = n.get('VirtualMachineInstance/life') as { metadata: Record<string, unknown>; status: { conditions: Array<{ lastTransitionTime: string }> } };
    // assert
    assert.ok(pod, `the generated pod name becomes <generateName>#1 (got ${[...n.keys()].join(', ')})`);
    assert.deepEqual(pod.metadata.labels, { 'kubevirt.io/created-by': '<uid:VirtualMachineInstance/life>' });
    assert.equal(pod.metadata.uid, '<uid:Pod/virt-launcher-life-#1>');
    assert.equal(pod.metadata.managedFields, undefined);
    assert.equal(pod.spec.volumes[0]!.name, 'kube-api-access-<random>');
    assert.deepEqual(pod.spec.containers[0]!.args, ['--qemu-timeout', '<qemu-timeout>']);
    assert.equal(pod.status.podIP, '<ip>');
    assert.equal(vmi.metadata.resourceVersion, undefined);
    assert.equal(vmi.metadata.creationTimestamp, '<time>');
    assert.equal(vmi.metadata.generation, undefined, "a VMI's generation counts its status writes: not compared");
    assert.equal(vmi.status.conditions[0]!.lastTransitionTime, '<time>');
  });

  test("a VM's generation is kept; nulls are absent; node names, conditions' order and Go times are normalised", () => {
    // arrange
    const vm: LiveObject = {
      kind: 'VirtualMachine',
      metadata: { name: 'v', generation: 2, annotations: { 'kubevirt.io/evacuationMigration': 'node02', t: '2026-12-06 09:50:36 +0000 UTC' } },
      status: { conditions: [{ type: 'Ready', status: 'False', lastProbeTime: null }, { type: 'LiveMigratable', status: 'True' }], nodeName: 'node01' },
    };
    // act
    const n = normaliseAll([vm]).get('VirtualMachine/v') as { metadata: { generation: number; annotations: Record<string, string> }; status: { conditions: Array<Record<string, unknown>>; nodeName: string } };
    // assert
    assert.equal(n.metadata.generation, 2);
    assert.deepEqual(n.status.conditions, [{ type: 'LiveMigratable', status: 'True' }, { type: 'Ready', status: 'False' }]);
    assert.equal(n.status.nodeName, '<node>');
    assert.deepEqual(n.metadata.annotations, { 'kubevirt.io/evacuationMigration': '<node>', t: '<time>' });
  });

  test('two runs differing only in what is normalised are identical', () => {
    // arrange
    const ours = run(side([UID_VMI, UID_POD], 'x7k2p', '301s'), ['VirtualMachineInstance/life Normal SuccessfulCreate virtualmachine-controller']);
    const theirs = run(side(['9a1b2c3d-0000-4000-8000-000000000001', '9a1b2c3d-0000-4000-8000-000000000002'], 'q9zzb', '255s'), ['VirtualMachineInstance/life Normal SuccessfulCreate virtualmachine-controller']);
    // act
    const v = compareRuns(ours, theirs);
    // assert
    assert.equal(v.identical, true, formatVerdict(v));
    assert.equal(formatVerdict(v), 'vmi-lifecycle: identical');
  });

  test('a differing field, an object or an event on one side only, and a stuck step each make a difference', () => {
    // arrange
    const ours = run(side([UID_VMI, UID_POD], 'x7k2p', '301s'), ['VirtualMachineInstance/life Normal SuccessfulCreate virtualmachine-controller']);
    const theirs = run([...side([UID_VMI, UID_POD], 'x7k2p', '301s', { runtimeUser: 107 }), { kind: 'VirtualMachineInstanceMigration', metadata: { name: 'm' } }], ['VirtualMachineInstance/life Normal SuccessfulCreate virtualmachine-controller', 'Pod/virt-launcher-life-x7k2p Normal Created kubelet'], 'a VMI created, Running: not reached within 90 s');
    // act
    const v = compareRuns(ours, theirs);
    const text = formatVerdict(v);
    // assert
    assert.equal(v.identical, false);
    assert.deepEqual(v.differences['VirtualMachineInstance/life']?.map((d) => d.path), ['status.runtimeUser']);
    assert.deepEqual(v.onlyKubevirt, ['VirtualMachineInstanceMigration/m']);
    assert.deepEqual(v.eventsOnlyKubevirt, ['Pod/virt-launcher-life-#1 Normal Created kubelet'], 'event names normalised too');
    assert.deepEqual(v.stuck, ["KubeVirt's: a VMI created, Running: not reached within 90 s"]);
    assert.match(text, /VirtualMachineInstance\/life status\.runtimeUser: ours \(absent\) vs KubeVirt's 107/);
  });
});
