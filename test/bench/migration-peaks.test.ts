/**
 * The drain benchmark's replay of the migration limits from milestones (support/migration-peaks.ts):
 * a migration runs from its target pod's create to Succeeded/Failed/deleted, counted per source
 * node as its VMI's node was last written.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MigrationPeakTracker } from './support/migration-peaks.ts';
import type { Milestone } from './support/milestones.ts';

const vmi = (name: string, node: string): Milestone => ({ kind: 'vmi', name, verb: 'patch', phase: 'Running', node, time: 0 });
const target = (vmiName: string, uid: string): Milestone => ({ kind: 'pod', vmi: vmiName, migrationUid: uid, time: 0 });
const final = (uid: string, phase = 'Succeeded'): Milestone => ({ kind: 'migration', uid, vmi: '', phase, time: 0 });

test('peaks: running from the target pod to the final phase, per source node', () => {
  // arrange
  const tracker = new MigrationPeakTracker();
  const writes: Milestone[] = [
    vmi('a', 'n1'), vmi('b', 'n1'), vmi('c', 'n2'),
    target('a', 'ma'), target('b', 'mb'), target('c', 'mc'), // 3 running, 2 out of n1
    final('ma'), final('mb', 'Failed'), final('mc', 'Deleted'),
    { kind: 'pod', vmi: 'a', time: 0 }, // a launcher pod that is no migration's target
    target('a', 'ma'), // a late duplicate of a finished migration's pod: not counted again
  ];
  // act
  for (const w of writes) tracker.see(w);
  // assert
  assert.deepEqual(tracker.peaks, { cluster: 3, perNode: 2, targetPods: 3 });
});

test('a source node not yet seen counts alone, never pooled with other unknowns', () => {
  // arrange
  const tracker = new MigrationPeakTracker();
  // act
  for (const w of [target('x', 'mx'), target('y', 'my')]) tracker.see(w);
  // assert
  assert.deepEqual(tracker.peaks, { cluster: 2, perNode: 1, targetPods: 2 });
});
