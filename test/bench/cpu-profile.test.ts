import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summariseProfile } from './support/cpu-profile.ts';

describe('CPU profile by component', () => {
  // (root) → queue claim → native `all` (node:sqlite); (root) → client-node → JSON.parse; (root) → GC.
  const frame = (url: string, functionName: string) => ({ url, functionName, lineNumber: 0 });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('', '(root)'), children: [2, 4, 6, 7] },
      { id: 2, callFrame: frame('file:///repo/shared/queue/sqlite.ts', 'claim'), children: [3] },
      { id: 3, callFrame: frame('', 'all') },
      { id: 4, callFrame: frame('file:///repo/node_modules/@kubernetes/client-node/dist/watch.js', 'onData'), children: [5] },
      { id: 5, callFrame: frame('', 'parse') },
      { id: 6, callFrame: frame('', '(garbage collector)') },
      { id: 7, callFrame: frame('', '(idle)') },
    ],
    samples: [2, 3, 3, 3, 5, 5, 6, 7, 7, 7],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };

  test("a native frame counts for the component of the script that called it; only what no script called is the runtime's", () => {
    const f = summariseProfile(profile);
    assert.equal(f.idlePercent, 30);
    assert.deepEqual(f.byComponent, {
      'queue + state (SQLite)': 57.1,
      'kube client (client-node, undici, HTTP)': 28.6,
      'GC, runtime (no script caller)': 14.3,
    });
    assert.equal(f.topFunctions['all (native:1)'], 42.9, 'the function list still names the native frame itself');
  });
});
