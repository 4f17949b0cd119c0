/**
 * The runtime user KubeVirt's migration controller settles on the VMI before it renders the target
 * pod (the live differential lane found ours rendering a root target pod where KubeVirt's runs as
 * 107, non-root): the patch (target-prep.ts). That the target pod is rendered from the patched VMI
 * is reconcile.test.ts's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { runtimeUserPatch } from '../../../functions/migration/target-prep.ts';

function vmi(runtimeUser?: number, annotations?: Record<string, string>): VirtualMachineInstance {
  return { metadata: { name: 'v', namespace: 'ns', ...(annotations ? { annotations } : {}) }, spec: { domain: { devices: {} } }, status: { phase: 'Running', ...(runtimeUser !== undefined ? { runtimeUser } : {}) } } as VirtualMachineInstance;
}

describe('runtimeUserPatch', () => {
  const cases: ReadonlyArray<{ name: string; vmi: VirtualMachineInstance; root: boolean; want: unknown[] }> = [
    {
      name: 'non-root cluster, a VMI without runtimeUser nor annotations → 107 (added: there is no field to replace) and the annotations map',
      vmi: vmi(),
      root: false,
      want: [{ op: 'add', path: '/status/runtimeUser', value: 107 }, { op: 'add', path: '/metadata/annotations', value: { 'kubevirt.io/nonroot': 'true' } }],
    },
    { name: 'non-root cluster, a root VMI with other annotations → 107 and the one annotation', vmi: vmi(0, { a: 'b' }), root: false, want: [{ op: 'replace', path: '/status/runtimeUser', value: 107 }, { op: 'add', path: '/metadata/annotations/kubevirt.io~1nonroot', value: 'true' }] },
    { name: 'non-root cluster, already settled → nothing', vmi: vmi(107, { 'kubevirt.io/nonroot': 'true' }), root: false, want: [] },
    { name: 'Root gate, a non-root VMI → 0 and the annotation removed', vmi: vmi(107, { 'kubevirt.io/nonroot': 'true' }), root: true, want: [{ op: 'replace', path: '/status/runtimeUser', value: 0 }, { op: 'remove', path: '/metadata/annotations/kubevirt.io~1nonroot' }] },
    { name: 'Root gate, a root VMI → nothing', vmi: vmi(0), root: true, want: [] },
    { name: 'Root gate, a VMI without runtimeUser (Go\'s 0: root) → nothing', vmi: vmi(), root: true, want: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const ops = runtimeUserPatch(c.vmi, c.root);
      // assert
      assert.deepEqual(ops, c.want);
    });
  }
});
