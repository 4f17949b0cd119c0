/** virt-api's pause/unpause answers and virt-handler's condition write, as a pure function (sandbox/virt-api/vmi-pause.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Vmi } from '../../../sandbox/nodes/objects.ts';
import { pauseAnswer } from '../../../sandbox/virt-api/vmi-pause.ts';

const NOW = '2026-12-06T12:00:00Z';
const vmi = (phase: string, conditions?: { type: string; status: string }[], spec: Record<string, unknown> = {}): Vmi => ({ metadata: { name: 'v', resourceVersion: '7' }, spec, status: { phase, ...(conditions ? { conditions } : {}) } }) as Vmi;

test('refusals, in virt-api’s order and words', () => {
  const cases: [string, ReturnType<typeof pauseAnswer>, number, RegExp][] = [
    ['no VMI', pauseAnswer('pause', undefined, 'v', NOW), 404, /not found/],
    ['pause, not Running', pauseAnswer('pause', vmi('Scheduled'), 'v', NOW), 409, /VM is not running/],
    ['pause, an exec liveness probe', pauseAnswer('pause', vmi('Running', [], { livenessProbe: { exec: {} } }), 'v', NOW), 403, /non-GuestAgentPing LivenessProbe/],
    ['pause, already paused', pauseAnswer('pause', vmi('Running', [{ type: 'Paused', status: 'True' }]), 'v', NOW), 409, /VMI is already paused/],
    ['unpause, not Running', pauseAnswer('unpause', vmi('Scheduled'), 'v', NOW), 409, /VMI is not running/],
    ['unpause, not paused', pauseAnswer('unpause', vmi('Running', []), 'v', NOW), 409, /VMI is not paused/],
    ['unpause during a snapshot', pauseAnswer('unpause', vmi('Running', [{ type: 'Paused', status: 'True' }]), 'v', NOW, true), 409, /VM snapshot is in progress/],
  ];
  for (const [name, got, code, message] of cases) {
    assert.ok('code' in got, name);
    assert.equal(got.code, code, name);
    assert.match(got.message, message, name);
  }
});

test('pause adds PausedByUser (a guest-agent ping probe allowed); unpause removes it; both guarded by the resourceVersion', () => {
  const pause = pauseAnswer('pause', vmi('Running', undefined, { livenessProbe: { guestAgentPing: {} } }), 'v', NOW);
  const unpause = pauseAnswer('unpause', vmi('Running', [{ type: 'Ready', status: 'True' }, { type: 'Paused', status: 'True' }]), 'v', NOW);
  assert.deepEqual(pause, {
    ops: [
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/status/conditions', value: [{ type: 'Paused', status: 'True', lastProbeTime: NOW, lastTransitionTime: NOW, reason: 'PausedByUser', message: 'VMI was paused by user' }] },
    ],
  });
  assert.deepEqual(unpause, { ops: [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }, { op: 'remove', path: '/status/conditions/1' }] });
});
