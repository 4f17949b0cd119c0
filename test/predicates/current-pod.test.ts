/**
 * `currentVmiPod` (KubeVirt's CurrentVMIPod, reference.md §a.2): the newest pod the VMI controls,
 * skipping pods whose node differs from a set `status.nodeName` — a migration target pod not yet
 * bound to a node included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { currentVmiPod } from '../../shared/predicates/pods.ts';

const VMI_UID = 'vmi-uid';

function pod(name: string, created: string, nodeName?: string, owner = VMI_UID): V1Pod {
  return {
    metadata: { name, namespace: 'ns', creationTimestamp: new Date(created), ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm', uid: owner, controller: true }] },
    spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
  };
}

function vmi(nodeName?: string): VirtualMachineInstance {
  return { metadata: { name: 'vm', namespace: 'ns', uid: VMI_UID }, spec: { domain: { devices: {} } }, status: nodeName ? { nodeName } : {} } as VirtualMachineInstance;
}

test('currentVmiPod: the newest controlled pod on the VMI’s node, or any when the VMI has no node yet', () => {
  const source = pod('source', '2026-01-01T00:00:00Z', 'node01');
  const cases: { name: string; vmi: VirtualMachineInstance; pods: V1Pod[]; want: string | undefined }[] = [
    { name: 'no node yet: the newest, bound or not', vmi: vmi(), pods: [source, pod('fresh', '2026-01-01T00:01:00Z')], want: 'fresh' },
    { name: 'a target pod bound to another node is skipped', vmi: vmi('node01'), pods: [source, pod('target', '2026-01-01T00:01:00Z', 'node02')], want: 'source' },
    { name: 'a target pod not bound yet is skipped too', vmi: vmi('node01'), pods: [source, pod('target', '2026-01-01T00:01:00Z')], want: 'source' },
    { name: 'after the hand-off the target on the new node is current', vmi: vmi('node02'), pods: [source, pod('target', '2026-01-01T00:01:00Z', 'node02')], want: 'target' },
    { name: 'pods of another VMI do not count', vmi: vmi('node01'), pods: [pod('other', '2026-01-01T00:02:00Z', 'node01', 'other-uid'), source], want: 'source' },
    { name: 'none on the node: none', vmi: vmi('node03'), pods: [source], want: undefined },
  ];
  for (const c of cases) {
    // act
    const got = currentVmiPod(c.vmi, c.pods);
    // assert
    assert.equal(got?.metadata?.name, c.want, c.name);
  }
});
