/**
 * The topology hinter's rules (shared/topology/hints.ts against KubeVirt's `tsc.go`,
 * `hinter.go`, `filter.go`): which VMIs need a TSC frequency, the lowest frequency among the
 * nodes that count, the configured minimum, and the launcher pod waiting for the hint.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { decideSync } from '../../../functions/vmi/sync.ts';
import { lowestTscFrequency, needsVmiNodes, tscHint, tscRequirement } from '../../../shared/topology/hints.ts';

const vmi = (domain: Record<string, unknown>, status: Record<string, unknown> = {}, architecture?: string) => ({ metadata: { name: 'v', namespace: 'ns', uid: 'u' }, spec: { domain: { devices: {}, ...domain }, ...(architecture && { architecture }) }, status }) as VirtualMachineInstance;
const node = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels } }) as V1Node;
const TSC = 'cpu-timer.node.kubevirt.io/tsc-frequency';

describe('TSC frequency requirement', () => {
  const rows: { name: string; vmi: VirtualMachineInstance; want: string | undefined }[] = [
    { name: 'invtsc required → boot', vmi: vmi({ cpu: { features: [{ name: 'invtsc', policy: 'require' }] } }), want: 'boot' },
    { name: 'invtsc forced → boot', vmi: vmi({ cpu: { features: [{ name: 'invtsc', policy: 'force' }] } }), want: 'boot' },
    { name: 'invtsc optional → none', vmi: vmi({ cpu: { features: [{ name: 'invtsc', policy: 'optional' }] } }), want: undefined },
    { name: 'Hyper-V re-enlightenment → migration', vmi: vmi({ features: { hyperv: { reenlightenment: { enabled: true } } } }), want: 'migration' },
    { name: 'on arm64 → none', vmi: vmi({ features: { hyperv: { reenlightenment: { enabled: true } } } }, {}, 'arm64'), want: undefined },
    { name: 'nothing → none', vmi: vmi({}), want: undefined },
  ];
  for (const r of rows) test(r.name, () => assert.equal(tscRequirement(r.vmi), r.want));
});

describe('the lowest frequency on the cluster', () => {
  test('among schedulable nodes reporting one, and unschedulable ones still running VMIs; invalid labels excluded', () => {
    // arrange
    const nodes = [
      node('a', { [TSC]: '2400000000', 'kubevirt.io/schedulable': 'true' }),
      node('b', { [TSC]: '2000000000', 'kubevirt.io/schedulable': 'false' }),
      node('c', { [TSC]: '1800000000', 'kubevirt.io/schedulable': 'false' }),
      node('d', { [TSC]: 'fast', 'kubevirt.io/schedulable': 'true' }),
      node('e', { 'kubevirt.io/schedulable': 'true' }),
    ];
    // act + assert
    assert.equal(lowestTscFrequency(nodes, new Set()), 2400000000, 'the unschedulable ones without VMIs do not count');
    assert.equal(lowestTscFrequency(nodes, new Set(['b'])), 2000000000);
    assert.equal(needsVmiNodes(nodes), true);
    assert.equal(lowestTscFrequency([node('e', {})], new Set()), 0, 'no node reports one: 0');
  });

  test('the configured minimum wins; one not > 0 is an error', () => {
    // act + assert
    assert.deepEqual(tscHint(3000000000, () => 1), { hz: 3000000000 });
    assert.deepEqual(tscHint(undefined, () => 1), { hz: 1 });
    assert.deepEqual(tscHint(0, () => 1), { error: 'failed to determine the lowest tsc frequency on the cluster: the configured minimumClusterTSCFrequency must be greater 0, but got 0' });
  });
});

describe('the launcher pod waits for the hint', () => {
  const observed = (v: VirtualMachineInstance) => ({ vmi: v, pods: [], pod: undefined, volumes: { ready: true, wffc: false }, migrations: [] });
  test('no hint → no pod; a hint (even 0) → the pod', () => {
    // arrange
    const domain = { features: { hyperv: { reenlightenment: { enabled: true } } } };
    // act + assert
    assert.equal(decideSync(observed(vmi(domain, { phase: 'Pending' }))).kind, 'none');
    assert.equal(decideSync(observed(vmi(domain, { phase: 'Pending', topologyHints: { tscFrequency: 0 } }))).kind, 'create-pod');
    assert.equal(decideSync(observed(vmi({}, { phase: 'Pending' }))).kind, 'create-pod', 'a VMI that needs none does not wait');
  });
});
