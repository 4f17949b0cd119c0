/**
 * Which waiting migrations a freed slot wakes (functions/relay/migration-wake.ts), table-driven:
 * the best of the freed slot's source node and the best of any other node; best = highest
 * priority, then first in the given order (least recently woken).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pickWaitingToWake, type WaitingMigration } from '../../../functions/migration/wake-waiting.ts';

const w = (priority: number, node?: string): WaitingMigration => ({ priority, node });

interface Case {
  readonly name: string;
  readonly waiting: readonly (readonly [string, WaitingMigration])[];
  readonly sourceNode: string | undefined;
  readonly want: readonly string[];
}

const CASES: readonly Case[] = [
  { name: 'nobody waiting → nothing', waiting: [], sourceNode: 'n1', want: [] },
  { name: 'one drain: the first waiting of the node, nobody else', waiting: [['a', w(100, 'n1')], ['b', w(100, 'n1')], ['c', w(100, 'n1')]], sourceNode: 'n1', want: ['a'] },
  { name: 'same node and another node: one of each', waiting: [['x', w(100, 'n2')], ['a', w(100, 'n1')], ['y', w(100, 'n2')]], sourceNode: 'n1', want: ['a', 'x'] },
  { name: 'higher priority first within the node, order breaks ties', waiting: [['low', w(20, 'n1')], ['hi1', w(100, 'n1')], ['hi2', w(100, 'n1')]], sourceNode: 'n1', want: ['hi1'] },
  { name: 'higher priority first on the other nodes', waiting: [['o-low', w(0, 'n2')], ['o-hi', w(50, 'n3')]], sourceNode: 'n1', want: ['o-hi'] },
  { name: 'a waiting migration whose VMI node is unknown counts as another node', waiting: [['u', w(100, undefined)]], sourceNode: 'n1', want: ['u'] },
  { name: 'source node unknown: the two best of all', waiting: [['a', w(20, 'n1')], ['b', w(100, 'n2')], ['c', w(50, 'n1')], ['d', w(100, 'n3')]], sourceNode: undefined, want: ['b', 'd'] },
  { name: 'source node unknown, one waiting', waiting: [['a', w(0, 'n1')]], sourceNode: undefined, want: ['a'] },
];

describe('pickWaitingToWake', () => {
  for (const c of CASES) {
    test(c.name, () => {
      // act
      const got = pickWaitingToWake(c.waiting, c.sourceNode);
      // assert
      assert.deepEqual(got, c.want);
    });
  }
});
