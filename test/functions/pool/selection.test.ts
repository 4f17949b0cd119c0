import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachinePoolSelectionPolicy } from '../../../shared/api/index.ts';
import { healingCandidates, parseDurationMs } from '../../../functions/pool/autoheal.ts';
import { selectForDeletion } from '../../../functions/pool/delete-selection.ts';
import { matchesSelectors, sortVms } from '../../../functions/pool/selection-policy.ts';
import { poolVm } from './fixtures.ts';

const names = (vms: readonly { metadata?: { name?: string } }[]) => vms.map((v) => v.metadata?.name);

describe('scale-in sort policies', () => {
  const vms = [
    poolVm('p-2', { created: '2026-03-01T10:02:00Z' }),
    poolVm('p-10', { created: '2026-03-01T10:00:00Z' }),
    poolVm('p-1', { created: '2026-03-01T10:05:00Z' }),
  ];
  const cases: Array<[string, string[]]> = [
    ['AscendingOrder', ['p-1', 'p-2', 'p-10']],
    ['DescendingOrder', ['p-10', 'p-2', 'p-1']],
    ['Newest', ['p-1', 'p-2', 'p-10']],
    ['Oldest', ['p-10', 'p-2', 'p-1']],
  ];
  for (const [sort, want] of cases) test(sort, () => assert.deepEqual(names(sortVms(vms, sort as never, Math.random)), want));
  test('Random draws from the random source (a permutation)', () => {
    // act
    const got = names(sortVms(vms, 'Random', () => 0));
    // assert
    assert.deepEqual([...got].sort(), ['p-1', 'p-10', 'p-2']);
    assert.notDeepEqual(got, names(vms), 'random 0 moves the last element first');
  });
});

describe('delete selection (scale-in and autohealing)', () => {
  const asc: VirtualMachinePoolSelectionPolicy = { sortPolicy: 'AscendingOrder' };
  const cases: Array<{ name: string; vms: ReturnType<typeof poolVm>[]; count: number; policy?: VirtualMachinePoolSelectionPolicy; want: string[] }> = [
    { name: 'the first `count` in sort order', vms: [poolVm('p-0'), poolVm('p-1'), poolVm('p-2')], count: 2, policy: asc, want: ['p-0', 'p-1'] },
    { name: 'deleting VMs count as removals already', vms: [poolVm('p-0', { deleting: true }), poolVm('p-1'), poolVm('p-2')], count: 2, policy: asc, want: ['p-1'] },
    // Upstream panics here (Q-P6): more VMs already deleting than removals wanted.
    { name: 'more deleting than wanted: nothing (upstream panics)', vms: [poolVm('p-0', { deleting: true }), poolVm('p-1', { deleting: true }), poolVm('p-2')], count: 1, policy: asc, want: [] },
    {
      name: 'selectors narrow after sorting; fewer than count: what is available (upstream panics)',
      vms: [poolVm('p-0'), poolVm('p-1', { templateLabels: { tier: 'spare' } }), poolVm('p-2')],
      count: 2,
      policy: { sortPolicy: 'AscendingOrder', selectors: { labelSelector: { matchLabels: { tier: 'spare' } } } },
      want: ['p-1'],
    },
    { name: 'count 0: nothing', vms: [poolVm('p-0')], count: 0, policy: asc, want: [] },
    { name: 'count above the list: all of it', vms: [poolVm('p-0'), poolVm('p-1')], count: 5, policy: asc, want: ['p-0', 'p-1'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = selectForDeletion(c.vms, c.count, c.policy, Math.random);
      // assert
      assert.deepEqual(names(got.vms), c.want);
    });
  }
  test('an unknown sort policy is Random, flagged for a warning', () => {
    assert.equal(selectForDeletion([poolVm('p-0')], 1, { sortPolicy: 'Bogus' }, Math.random).unknownSort, true);
  });
});

describe('selection policy selectors', () => {
  const vm = poolVm('p-0', { templateLabels: { tier: 'web' }, nodeSelector: { zone: 'a', cores: '8' } });
  const cases: Array<{ name: string; selectors: Parameters<typeof matchesSelectors>[1]; want: boolean }> = [
    { name: 'labelSelector on the VMI template labels', selectors: { labelSelector: { matchLabels: { tier: 'web' } } }, want: true },
    { name: 'labelSelector mismatch', selectors: { labelSelector: { matchLabels: { tier: 'db' } } }, want: false },
    { name: 'node requirement In on the nodeSelector', selectors: { nodeSelectorRequirementMatcher: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, want: true },
    { name: 'NotIn matches an absent key', selectors: { nodeSelectorRequirementMatcher: [{ key: 'gpu', operator: 'NotIn', values: ['x'] }] }, want: true },
    { name: 'DoesNotExist', selectors: { nodeSelectorRequirementMatcher: [{ key: 'zone', operator: 'DoesNotExist' }] }, want: false },
    { name: 'Gt compares integers', selectors: { nodeSelectorRequirementMatcher: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }, want: true },
    { name: 'Lt compares integers', selectors: { nodeSelectorRequirementMatcher: [{ key: 'cores', operator: 'Lt', values: ['4'] }] }, want: false },
    { name: 'Gt on an absent key fails', selectors: { nodeSelectorRequirementMatcher: [{ key: 'mem', operator: 'Gt', values: ['1'] }] }, want: false },
    {
      name: 'both must match',
      selectors: { labelSelector: { matchLabels: { tier: 'web' } }, nodeSelectorRequirementMatcher: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      want: false,
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(matchesSelectors(vm, c.selectors), c.want));
  test('another operator is an error', () => {
    assert.throws(() => matchesSelectors(vm, { nodeSelectorRequirementMatcher: [{ key: 'zone', operator: 'Near' as never, values: ['a'] }] }), /not a valid label selector operator/);
  });
});

describe('autohealing candidates', () => {
  const now = Date.parse('2026-03-01T12:10:00Z');
  const failing = (name: string, status: Record<string, unknown>) => ({ ...poolVm(name), status } as ReturnType<typeof poolVm>);
  const ready = (probe: string) => [{ type: 'Ready', status: 'False', lastProbeTime: probe, lastTransitionTime: '2026-03-01T12:09:59Z' }];
  const cases: Array<{ name: string; vm: ReturnType<typeof poolVm>; strategy?: Record<string, unknown>; want: boolean }> = [
    { name: 'three consecutive start failures (default threshold)', vm: failing('a', { startFailure: { consecutiveFailCount: 3 } }), want: true },
    { name: 'two are not enough', vm: failing('b', { startFailure: { consecutiveFailCount: 2 } }), want: false },
    { name: 'a lower threshold', vm: failing('c', { startFailure: { consecutiveFailCount: 1 } }), strategy: { startUpFailureThreshold: 1 }, want: true },
    { name: 'CrashLoopBackOff, Ready=False probed 5m ago', vm: failing('d', { printableStatus: 'CrashLoopBackOff', conditions: ready('2026-03-01T12:05:00Z') }), want: true },
    // The duration runs from lastProbeTime, not lastTransitionTime (Q-P14).
    { name: 'probed 4m ago: not yet', vm: failing('e', { printableStatus: 'ErrImagePull', conditions: ready('2026-03-01T12:06:00Z') }), want: false },
    { name: 'a shorter minFailingToStartDuration', vm: failing('f', { printableStatus: 'ErrorUnschedulable', conditions: ready('2026-03-01T12:09:00Z') }), strategy: { minFailingToStartDuration: '30s' }, want: true },
    { name: 'not a start error status', vm: failing('g', { printableStatus: 'Stopped', conditions: ready('2026-03-01T11:00:00Z') }), want: false },
    { name: 'start error but no Ready=False', vm: failing('h', { printableStatus: 'DataVolumeError' }), want: false },
  ];
  for (const c of cases) test(c.name, () => assert.equal(healingCandidates([c.vm], c.strategy ?? {}, now).length === 1, c.want));

  const durations: Array<[string, number | undefined]> = [['5m', 300_000], ['1h30m', 5_400_000], ['1.5s', 1500], ['250ms', 250], ['0', 0], ['5', undefined], ['', undefined]];
  for (const [d, want] of durations) test(`duration ${JSON.stringify(d)} = ${want}`, () => assert.equal(parseDurationMs(d), want));
});
