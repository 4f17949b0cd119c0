/**
 * Node maintenance and scaling as a cluster admin types them, through the real kubectl:
 * cordon (and cordon again), drain of a node whose pods are covered by a PodDisruptionBudget (refused while the
 * budget would break, done once it allows; `--ignore-daemonsets` for virt-handler, as KubeVirt
 * users drain), uncordon, and `kubectl scale` on a KubeVirt kind with a `/scale` subresource
 * (VirtualMachineInstanceReplicaSet).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { headerOf, rowOf, SKIP_WITHOUT_KUBECTL, useKubectlCluster } from './support.ts';

function pod(name: string, node: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {app: web}
spec:
  nodeName: ${node}
  terminationGracePeriodSeconds: 1
  containers:
  - {name: nginx, image: "nginx:1.27"}
`;
}

const PDB = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
`;

const VMIRS = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {name: fleet}
spec:
  replicas: 1
  selector: {matchLabels: {app: fleet}}
  template:
    metadata: {labels: {app: fleet}}
    spec:
      domain:
        devices: {}
        resources: {requests: {memory: 64Mi}}
`;

describe('kubectl node maintenance and scale', { skip: SKIP_WITHOUT_KUBECTL }, () => {
  const cluster = useKubectlCluster();

  test('drain cordons, evicts what the budget allows, is refused for the rest, finishes once the budget allows', async () => {
    // arrange: two pods on node01, one on node02, a budget of 2 → one disruption allowed
    const file = await cluster().manifest('web.yaml', [pod('web-a', 'node01'), pod('web-b', 'node01'), pod('web-c', 'node02'), PDB].join('---\n'));
    assert.equal((await cluster().kubectl(['apply', '-f', file])).code, 0);
    assert.equal((await cluster().kubectl(['wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '--timeout=60s'])).code, 0);
    const pdb = await cluster().kubectl(['get', 'pdb', 'web']);
    assert.deepEqual(headerOf(pdb.stdout), ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE']);
    assert.deepEqual(rowOf(pdb.stdout, 'web')!.slice(1, 4), ['2', 'N/A', '1']);

    // act: the budget allows one of node01's two pods to go
    const refused = await cluster().kubectl(['drain', 'node01', '--ignore-daemonsets', '--force', '--timeout=8s']);
    // assert
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout, /node\/node01 cordoned/);
    assert.match(refused.stderr, /error when evicting pods\/"web-[ab]" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./);
    assert.match(refused.stdout, /pod\/web-[ab] evicted/);
    const nodes = await cluster().kubectl(['get', 'nodes']);
    assert.equal(rowOf(nodes.stdout, 'node01')![1], 'Ready,SchedulingDisabled');

    // act: relax the budget; drain again
    assert.equal((await cluster().kubectl(['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":1}}'])).code, 0);
    const drained = await cluster().kubectl(['drain', 'node01', '--ignore-daemonsets', '--force', '--timeout=60s']);
    // assert
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, /node\/node01 drained/);
    const left = await cluster().kubectl(['get', 'pods', '-o', 'wide']);
    assert.deepEqual(left.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0]), ['web-c']);

    // act
    const uncordon = await cluster().kubectl(['uncordon', 'node01']);
    // assert
    assert.equal(uncordon.stdout.trim(), 'node/node01 uncordoned');
    assert.equal(rowOf((await cluster().kubectl(['get', 'nodes'])).stdout, 'node01')![1], 'Ready');
  });

  test('cordon marks a node SchedulingDisabled, says so once; uncordon lifts it', async () => {
    // act
    const cordon = await cluster().kubectl(['cordon', 'node03']);
    const again = await cluster().kubectl(['cordon', 'node03']);
    const shown = rowOf((await cluster().kubectl(['get', 'nodes'])).stdout, 'node03');
    const uncordon = await cluster().kubectl(['uncordon', 'node03']);
    // assert
    assert.equal(cordon.stdout.trim(), 'node/node03 cordoned', cordon.stderr);
    assert.equal(again.stdout.trim(), 'node/node03 already cordoned');
    assert.equal(shown![1], 'Ready,SchedulingDisabled');
    assert.equal(uncordon.stdout.trim(), 'node/node03 uncordoned');
  });

  test('scale a VirtualMachineInstanceReplicaSet through its /scale subresource', async () => {
    // arrange
    const file = await cluster().manifest('vmirs.yaml', VMIRS);
    assert.equal((await cluster().kubectl(['apply', '-f', file])).code, 0);
    // act
    const scaled = await cluster().kubectl(['scale', 'vmirs', 'fleet', '--replicas=3']);
    const guarded = await cluster().kubectl(['scale', 'vmirs', 'fleet', '--current-replicas=2', '--replicas=5']);
    const replicas = await cluster().kubectl(['get', 'vmirs', 'fleet', '-o', 'jsonpath={.spec.replicas}']);
    const table = await cluster().kubectl(['get', 'vmirs']);
    // assert
    assert.equal(scaled.stdout.trim(), 'virtualmachineinstancereplicaset.kubevirt.io/fleet scaled', scaled.stderr);
    assert.notEqual(guarded.code, 0, 'a --current-replicas precondition that does not hold is refused');
    assert.equal(replicas.stdout, '3');
    assert.deepEqual(headerOf(table.stdout).slice(0, 2), ['NAME', 'DESIRED']);
    assert.equal(rowOf(table.stdout, 'fleet')![1], '3');
  });
});
