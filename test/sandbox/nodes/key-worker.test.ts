/**
 * The node side's work queue (key-worker.ts): oldest key first, a waiting key queued once, one key
 * never handled twice at once, a key added while handled runs again after, a failed key retried —
 * and a long queue (a burst's thousands of keys) taken in order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyWorker } from '../../../sandbox/nodes/key-worker.ts';

const tick = () => new Promise((r) => setImmediate(r));

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await tick();
  assert.ok(cond(), 'condition not reached');
}

test('keys are handled oldest first, each once while it waits, across a queue of thousands', async () => {
  const seen: string[] = [];
  const w = new KeyWorker(async (k) => void seen.push(k), { concurrency: 1 });
  const keys = Array.from({ length: 5000 }, (_, i) => `k${i}`);
  for (const k of keys) w.add(k);
  for (const k of keys) w.add(k); // already waiting (or handled): not queued twice while waiting
  await until(() => seen.length >= 5000);
  await tick();
  assert.deepEqual(seen.slice(0, 5000), keys);
  await w.stop();
});

test('a key added while it is handled runs again afterwards, never at the same time', async () => {
  let running = 0;
  let maxRunning = 0;
  let runs = 0;
  let release!: () => void;
  const w = new KeyWorker(
    async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
      running--;
    },
    { concurrency: 4 },
  );
  w.add('a');
  await until(() => runs === 1);
  w.add('a');
  w.add('a');
  await tick();
  assert.equal(runs, 1);
  release();
  await until(() => runs === 2);
  assert.equal(maxRunning, 1);
  await w.stop();
});

test('a failed key is retried with backoff until it succeeds', async () => {
  let attempts = 0;
  const errors: string[] = [];
  const w = new KeyWorker(
    async () => {
      attempts++;
      if (attempts < 3) throw new Error(`try ${attempts}`);
    },
    { retryBaseMs: 1, onError: (k, e) => errors.push(`${k}: ${(e as Error).message}`) },
  );
  w.add('x');
  await until(() => attempts === 3);
  assert.deepEqual(errors, ['x: try 1', 'x: try 2']);
  await w.stop();
});
