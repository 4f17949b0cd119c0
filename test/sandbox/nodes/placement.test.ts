import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PlacedIndex, placePod, podRequests } from '../../../sandbox/nodes/placement.ts';
import { buildNode, DEFAULT_NODE_SHAPE } from '../../../sandbox/nodes/node-pool.ts';
import { parseQuantity } from '../../../sandbox/nodes/quantity.ts';
import type { Node, Pod } from '../../../sandbox/nodes/objects.ts';

const NOW = '2026-01-01T00:00:00Z';
const nodes = (n: number, mutate?: (node: Node, i: number) => void): Node[] =>
  Array.from({ length: n }, (_, i) => {
    const node = buildNode(i + 1, DEFAULT_NODE_SHAPE, NOW) as Node;
    mutate?.(node, i + 1);
    return node;
  });

function pod(name: string, spec: Pod['spec'] = {}, labels: Record<string, string> = {}): Pod {
  return { metadata: { name, namespace: 'default', uid: name, labels }, spec: { containers: [{ name: 'compute', resources: { requests: { cpu: '1', memory: '1Gi' } } }], ...spec } };
}

describe('placement', () => {
  test('quantities parse like Kubernetes quantities', () => {
    const cases: [string, number][] = [['100m', 0.1], ['2Gi', 2 ** 31], ['1k', 1000], ['1e3', 1000], ['64M', 64e6], ['1.5', 1.5]];
    for (const [q, want] of cases) assert.equal(parseQuantity(q), want, q);
    assert.throws(() => parseQuantity('lots'), /cannot parse/);
  });

  test('requests default to limits and init containers count as their max', () => {
    // arrange
    const p = pod('p', {
      containers: [{ name: 'a', resources: { limits: { 'devices.kubevirt.io/kvm': '1', cpu: '2' }, requests: { cpu: '500m' } } }],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '3' } } }],
      overhead: { memory: '10Mi' },
    });
    // act
    const r = podRequests(p);
    // assert
    assert.equal(r.get('cpu'), 3000, 'init container max wins over the 500m sum');
    assert.equal(r.get('devices.kubevirt.io/kvm'), 1, 'limit-only extended resource is requested');
    assert.equal(r.get('memory'), 10 * 2 ** 20);
  });

  const table: { name: string; pod: Pod; nodes: Node[]; placed?: { pod: Pod; nodeName: string }[]; want: string | RegExp }[] = [
    { name: 'least allocated, then name', pod: pod('a'), nodes: nodes(3), want: 'node01' },
    { name: 'nodeSelector no node has', pod: pod('a', { nodeSelector: { 'kubevirt.io/schedulable': 'true', gpu: 'yes' } }), nodes: nodes(2), want: /^0\/2 nodes are available: 2 node\(s\) didn't match Pod's node affinity\/selector\. preemption: 0\/2 nodes are available: 2 Preemption is not helpful for scheduling\.$/ },
    { name: 'launcher selectors match a KubeVirt node', pod: pod('a', { nodeSelector: { 'kubevirt.io/schedulable': 'true', 'machine-type.node.kubevirt.io/q35': 'true', 'cpu-model-migration.node.kubevirt.io/Skylake-Client-IBRS': 'true' } }), nodes: nodes(1), want: 'node01' },
    {
      name: 'untolerated NoSchedule taint',
      pod: pod('a'),
      nodes: nodes(2, (n, i) => i === 1 && (n.spec = { taints: [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }] })),
      want: 'node02',
    },
    {
      name: 'tolerated taint',
      pod: pod('a', { tolerations: [{ key: 'kubevirt.io/drain', operator: 'Exists' }] }),
      nodes: nodes(1, (n) => (n.spec = { taints: [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }] })),
      want: 'node01',
    },
    { name: 'cordoned node', pod: pod('a'), nodes: nodes(1, (n) => (n.spec = { unschedulable: true })), want: /1 node\(s\) were unschedulable/ },
    { name: 'capacity: cpu', pod: pod('a', { containers: [{ name: 'c', resources: { requests: { cpu: '17' } } }] }), nodes: nodes(2), want: /^0\/2 nodes are available: 2 Insufficient cpu\. preemption: 0\/2 nodes are available: 2 Preemption is not helpful for scheduling\.$/ },
    {
      name: 'capacity counts bound pods',
      pod: pod('b', { containers: [{ name: 'c', resources: { requests: { cpu: '10' } } }] }),
      nodes: nodes(2),
      placed: [{ pod: pod('x', { containers: [{ name: 'c', resources: { requests: { cpu: '10' } } }] }), nodeName: 'node01' }],
      want: 'node02',
    },
    {
      name: 'required node affinity NotIn',
      pod: pod('a', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['node01'] }] }] } } } }),
      nodes: nodes(2),
      want: 'node02',
    },
    {
      name: 'migration target anti-affinity to the source launcher',
      pod: pod('target', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': 'vmi-uid' } }, topologyKey: 'kubernetes.io/hostname' }] } } }),
      nodes: nodes(2),
      placed: [{ pod: pod('source', {}, { 'kubevirt.io/created-by': 'vmi-uid' }), nodeName: 'node01' }],
      want: 'node02',
    },
    {
      name: 'anti-affinity with one node only',
      pod: pod('target', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'x' } }, topologyKey: 'kubernetes.io/hostname' }] } } }),
      nodes: nodes(1),
      placed: [{ pod: pod('source', {}, { app: 'x' }), nodeName: 'node01' }],
      want: /didn't match pod anti-affinity rules/,
    },
    {
      name: "an existing pod's anti-affinity keeps newcomers away",
      pod: pod('b', {}, { app: 'x' }),
      nodes: nodes(2),
      placed: [{ pod: pod('a', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'x' } }, topologyKey: 'kubernetes.io/hostname' }] } } }), nodeName: 'node01' }],
      want: 'node02',
    },
    {
      name: 'required pod affinity',
      pod: pod('b', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }] } } }),
      nodes: nodes(3),
      placed: [{ pod: pod('db', {}, { app: 'db' }), nodeName: 'node03' }],
      want: 'node03',
    },
  ];
  for (const c of table) {
    test(c.name, () => {
      // act
      const got = placePod(c.pod, c.nodes, c.placed ?? []);
      // assert
      if (typeof c.want === 'string') assert.equal(got.nodeName, c.want, `expected ${c.want}, got ${JSON.stringify(got)}`);
      else {
        assert.equal(got.nodeName, undefined, `expected no node, got ${got.nodeName}`);
        assert.match((got as { message: string }).message, c.want);
      }
    });
  }

  test('the placed-pod index follows moves and deletes, and places as the list it was built from does', () => {
    // arrange: node-1 nearly full of 1-CPU pods, one pod moved away and one deleted
    const ns = nodes(2);
    const cpu = Number(ns[0]!.status?.allocatable?.cpu ?? 0);
    const index = new PlacedIndex();
    const list: { pod: Pod; nodeName: string }[] = [];
    for (let i = 0; i < cpu; i++) {
      const p = pod(`p${i}`);
      index.set(`default/p${i}`, p, 'node-1');
      list.push({ pod: p, nodeName: 'node-1' });
    }
    index.set('default/p0', list[0]!.pod, 'node-2');
    list[0] = { pod: list[0]!.pod, nodeName: 'node-2' };
    index.delete('default/p1');
    list.splice(1, 1);
    // act
    const fromIndex = placePod(pod('new'), ns, index);
    const fromList = placePod(pod('new'), ns, list);
    // assert
    assert.equal(index.podCount('node-1'), cpu - 2);
    assert.equal(index.podCount('node-2'), 1);
    assert.equal(index.used('node-1').get('cpu'), (cpu - 2) * 1000);
    assert.deepEqual(fromIndex, fromList);
    index.delete('default/nobody');
    assert.equal([...index.all()].length, cpu - 1);
  });
});
