import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineStateChangeRequest } from '../../../shared/api/index.ts';
import { decideRun, runStrategyOf, type RunDecision } from '../../../functions/vm/run-strategy.ts';
import { backoffSecondsLeft, nextStartFailure, startBackoffSeconds } from '../../../functions/vm/start-failure.ts';
import type { RunStrategy } from '../../../functions/vm/well-known.ts';

const VMI_UID = 'vmi-uid-1';

function vm(spec: Partial<VirtualMachine['spec']>, status: VirtualMachine['status'] = {}): VirtualMachine {
  return { metadata: { name: 'vm', namespace: 'default', uid: 'vm-uid' }, spec: { template: {}, ...spec }, status };
}

function vmi(phase: string, deleting = false): VirtualMachineInstance {
  return {
    metadata: { name: 'vm', namespace: 'default', uid: VMI_UID, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { domain: { devices: {} } },
    status: { phase },
  };
}

const STOP: VirtualMachineStateChangeRequest = { action: 'Stop', uid: VMI_UID };
const STOP_OLD: VirtualMachineStateChangeRequest = { action: 'Stop', uid: 'an-older-vmi' };
const START: VirtualMachineStateChangeRequest = { action: 'Start' };

describe('runStrategyOf', () => {
  const cases: [string, Partial<VirtualMachine['spec']>, RunStrategy | 'error'][] = [
    ['neither field → Halted', {}, 'Halted'],
    ['running: true → Always', { running: true }, 'Always'],
    ['running: false → Halted', { running: false }, 'Halted'],
    ['runStrategy wins when alone', { runStrategy: 'Manual' }, 'Manual'],
    ['both set → error (mutually exclusive)', { running: true, runStrategy: 'Always' }, 'error'],
    ['unknown strategy → error', { runStrategy: 'Sometimes' }, 'error'],
  ];
  for (const [name, spec, want] of cases) {
    test(name, () => {
      // act
      const got = runStrategyOf(vm(spec));
      // assert
      assert.deepEqual(got.ok ? got.strategy : 'error', want, `spec ${JSON.stringify(spec)}`);
    });
  }
});

describe('run-strategy matrix (reference §c.3)', () => {
  type Row = [strategy: RunStrategy, vmi: VirtualMachineInstance | undefined, requests: VirtualMachineStateChangeRequest[], statusStrategy: string | undefined, want: RunDecision['kind'] | 'stop+restart'];
  const rows: Row[] = [
    // Always
    ['Always', undefined, [], undefined, 'start'],
    ['Always', vmi('Running'), [], 'Always', 'none'],
    ['Always', vmi('Running'), [STOP], 'Always', 'stop'],
    ['Always', vmi('Running'), [STOP_OLD], 'Always', 'none'],
    ['Always', vmi('Failed'), [], 'Always', 'stop'],
    ['Always', vmi('Succeeded'), [], 'Always', 'stop'],
    ['Always', vmi('Failed', true), [], 'Always', 'none'],
    // RerunOnFailure
    ['RerunOnFailure', undefined, [], undefined, 'start'],
    ['RerunOnFailure', undefined, [], 'Halted', 'start'],
    ['RerunOnFailure', undefined, [], 'RerunOnFailure', 'none'],
    ['RerunOnFailure', undefined, [START], 'RerunOnFailure', 'start'],
    ['RerunOnFailure', vmi('Running'), [], 'RerunOnFailure', 'none'],
    ['RerunOnFailure', vmi('Failed'), [], 'RerunOnFailure', 'stop+restart'],
    ['RerunOnFailure', vmi('Succeeded'), [], 'RerunOnFailure', 'stop'],
    ['RerunOnFailure', vmi('Running'), [STOP], 'RerunOnFailure', 'stop'],
    ['RerunOnFailure', vmi('Failed', true), [], 'RerunOnFailure', 'none'],
    // Manual
    ['Manual', undefined, [], undefined, 'none'],
    ['Manual', undefined, [START], undefined, 'start'],
    ['Manual', undefined, [STOP_OLD, START], undefined, 'none'],
    ['Manual', vmi('Running'), [], 'Manual', 'none'],
    ['Manual', vmi('Running'), [STOP], 'Manual', 'stop'],
    ['Manual', vmi('Failed'), [], 'Manual', 'none'],
    // Halted
    ['Halted', undefined, [], undefined, 'none'],
    ['Halted', vmi('Running'), [], 'Always', 'stop'],
    ['Halted', vmi('Running', true), [], 'Always', 'none'],
    ['Halted', undefined, [START], undefined, 'switch-to-always'],
    // Once
    ['Once', undefined, [], undefined, 'start'],
    ['Once', vmi('Running'), [], 'Once', 'none'],
    ['Once', vmi('Succeeded'), [], 'Once', 'none'],
    ['Once', vmi('Failed'), [], 'Once', 'none'],
    ['Once', vmi('Running'), [STOP], 'Once', 'none'],
    // not supported
    ['WaitAsReceiver', undefined, [], undefined, 'unsupported'],
  ];
  for (const [strategy, v, requests, statusStrategy, want] of rows) {
    const name = `${strategy}, VMI ${v ? `${v.status?.phase}${v.metadata?.deletionTimestamp ? ' deleting' : ''}` : 'absent'}, requests [${requests.map((r) => r.action + (r.uid === VMI_UID ? '(this)' : r.uid ? '(old)' : '')).join(',')}], status.runStrategy ${statusStrategy ?? '-'} → ${want}`;
    test(name, () => {
      // arrange
      const theVm = vm({ runStrategy: strategy }, { stateChangeRequests: requests, ...(statusStrategy ? { runStrategy: statusStrategy } : {}) });
      // act
      const got = decideRun({ vm: theVm, strategy, vmi: v, backoffSeconds: 0 });
      // assert
      const kind = got.kind === 'stop' && got.restartAfter ? 'stop+restart' : got.kind;
      assert.equal(kind, want);
    });
  }

  for (const strategy of ['Always', 'RerunOnFailure'] as const) {
    test(`${strategy} without a VMI waits out a pending start backoff`, () => {
      // act
      const got = decideRun({ vm: vm({ runStrategy: strategy }), strategy, vmi: undefined, backoffSeconds: 17 });
      // assert
      assert.deepEqual(got, { kind: 'backoff', seconds: 17 });
    });
  }
});

describe('start-failure backoff', () => {
  test('interval × count², jitter up to half, capped at 300 s', () => {
    // assert: [count, random, seconds]
    const table: [number, number, number][] = [
      [1, 0, 10],
      [1, 0.99, 14],
      [2, 0, 40],
      [3, 0.5, 112],
      [5, 0, 250],
      [6, 0, 300],
      [9, 0.99, 300],
    ];
    for (const [count, random, want] of table) assert.equal(startBackoffSeconds(count, random), want, `count ${count} random ${random}`);
  });

  test('a final VMI that never ran counts once per UID; running clears it', () => {
    // arrange
    const now = Date.parse('2026-01-01T00:00:00Z');
    const failed = vmi('Failed');
    // act
    const first = nextStartFailure(undefined, 'Always', failed, now, 0);
    const again = nextStartFailure(first, 'Always', failed, now + 1000, 0);
    const ran = nextStartFailure(first, 'Always', { ...failed, status: { phase: 'Failed', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2026-01-01T00:00:00Z' }] } }, now, 0);
    const manual = nextStartFailure(first, 'Manual', failed, now, 0);
    // assert
    assert.deepEqual(first, { lastFailedVMIUID: VMI_UID, consecutiveFailCount: 1, retryAfterTimestamp: '2026-01-01T00:00:10.000Z' });
    assert.equal(again, first, 'the same failed VMI must not be counted twice');
    assert.equal(ran, undefined, 'a VMI that reached Running clears the crash loop');
    assert.equal(manual, undefined, 'Manual never restarts, so it never backs off');
    assert.equal(backoffSecondsLeft(first, now + 4000), 6);
  });
});
