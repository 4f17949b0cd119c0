import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SELECTED_NODE_ANNOTATION, volumeDecision, type ClaimView, type VolumeDecision } from '../../../sandbox/nodes/volume-binding.ts';

const pod = (...claims: string[]) => ({ spec: { volumes: claims.map((claimName) => ({ persistentVolumeClaim: { claimName } })) } });
const bound = (name: string, extra: Record<string, string> = {}): ClaimView => ({ metadata: { name, annotations: extra }, spec: { volumeName: `pv-${name}` } });
const unbound = (name: string, storageClassName?: string, annotations: Record<string, string> = {}): ClaimView => ({ metadata: { name, annotations }, spec: { ...(storageClassName ? { storageClassName } : {}) } });

test('volume binding: kube-scheduler places no pod on a missing or unbound Immediate claim; WaitForFirstConsumer claims get a node first', () => {
  const cases: { name: string; pod: ReturnType<typeof pod>; claims: ClaimView[]; want: VolumeDecision }[] = [
    { name: 'no claims', pod: pod(), claims: [], want: { kind: 'ready' } },
    { name: 'all bound', pod: pod('a', 'b'), claims: [bound('a'), bound('b')], want: { kind: 'ready' } },
    { name: 'missing claim', pod: pod('a'), claims: [], want: { kind: 'unschedulable', message: 'persistentvolumeclaim "a" not found' } },
    { name: 'unbound, Immediate class', pod: pod('a'), claims: [unbound('a', 'standard')], want: { kind: 'unschedulable', message: 'pod has unbound immediate PersistentVolumeClaims' } },
    { name: 'unbound, no class (the default: Immediate)', pod: pod('a'), claims: [unbound('a')], want: { kind: 'unschedulable', message: 'pod has unbound immediate PersistentVolumeClaims' } },
    { name: 'unbound WFFC claim: select a node', pod: pod('a', 'w'), claims: [bound('a'), unbound('w', 'wffc')], want: { kind: 'select-node', claims: ['w'] } },
    { name: 'WFFC claim names its node, not bound yet: wait', pod: pod('w'), claims: [unbound('w', 'wffc', { [SELECTED_NODE_ANNOTATION]: 'node02' })], want: { kind: 'unschedulable', message: 'waiting for the volumes of the selected node to be provisioned' } },
    { name: 'provisioned for a node: pinned there', pod: pod('w'), claims: [bound('w', { [SELECTED_NODE_ANNOTATION]: 'node02' })], want: { kind: 'ready', node: 'node02' } },
  ];
  for (const c of cases) {
    // arrange
    const byName = new Map(c.claims.map((cl) => [cl.metadata?.name ?? '', cl]));
    // act
    const got = volumeDecision(c.pod, (n) => byName.get(n), (sc) => (sc === 'wffc' ? 'WaitForFirstConsumer' : 'Immediate'));
    // assert
    assert.deepEqual(got, c.want, c.name);
  }
});
