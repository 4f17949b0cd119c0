/**
 * The relay's outbox over the real SQLite key queue: coalescing per key, a failing queue keeps
 * every key and retries (never drops), batches respect the size and the order keys arrived in,
 * and a newer cause arriving during a send is sent afterwards rather than lost.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Outbox } from '../../../functions/relay/outbox.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import type { Controller, KeyMessage } from '../../../shared/queue/message.ts';
import { SqliteKeyQueue } from '../../../shared/queue/sqlite-queue.ts';

function msg(key: string, rv: string, controller: Controller = 'vmi'): KeyMessage {
  return { v: 1, controller, key, cause: { kind: 'VirtualMachineInstance', namespace: 'ns', name: key.split('/')[1] ?? '', uid: `u-${key}`, resourceVersion: rv, event: 'MODIFIED', seenAt: 1 } };
}

/** The real queue, with a switch that makes `send` fail and a record of every batch sent. */
class FlakyQueue {
  readonly inner = new SqliteKeyQueue({ db: ':memory:' });
  failing = 0;
  readonly batches: string[][] = [];
  gate: Promise<void> | undefined;
  async send(messages: readonly KeyMessage[]): Promise<void> {
    await this.gate;
    if (this.failing > 0) {
      this.failing--;
      throw new Error('queue unavailable');
    }
    this.batches.push(messages.map((m) => `${m.key}@${m.cause.resourceVersion}`));
    await this.inner.send(messages);
  }
}

async function until(what: string, cond: () => boolean | Promise<boolean>, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for: ${what}`);
}

async function drain(q: SqliteKeyQueue, controller: Controller = 'vmi'): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const got = await q.receive(controller, 100, 0);
    if (got.length === 0) return out.sort();
    for (const rk of got) {
      out.push(`${rk.message.key}@${rk.message.cause.resourceVersion}`);
      await q.ack(controller, rk.receipt);
    }
  }
}

describe('Outbox', () => {
  test('many events for one key while it waits → one message, the newest cause', async () => {
    // arrange
    const q = new FlakyQueue();
    const box = new Outbox(q, { log: silentLogger, lingerMs: 20 });
    // act
    for (let rv = 1; rv <= 50; rv++) box.add(msg('ns/a', String(rv)));
    box.add(msg('ns/a', '1', 'vm'));
    await until('outbox empty', () => box.depth === 0);
    // assert
    assert.deepEqual(q.batches.flat().sort(), ['ns/a@1', 'ns/a@50'], 'one vmi message (newest) and one vm message');
    assert.deepEqual(await drain(q.inner), ['ns/a@50']);
    await box.close();
  });

  test('a failing queue keeps every key and retries until it succeeds', async () => {
    // arrange
    const q = new FlakyQueue();
    q.failing = 4;
    const errors: unknown[] = [];
    const box = new Outbox(q, { log: silentLogger, lingerMs: 1, maxBackoffMs: 50, onSendError: (e) => errors.push(e) });
    // act
    for (let i = 0; i < 30; i++) box.add(msg(`ns/k${i}`, '1'));
    await until('first failure', () => box.failingSince !== undefined);
    const keptWhileFailing = box.depth;
    await until('outbox empty after recovery', () => box.depth === 0);
    // assert
    assert.equal(keptWhileFailing, 30, 'keys were dropped after a failed send');
    assert.equal(errors.length, 4, 'each failed send is reported once');
    assert.equal(box.failingSince, undefined, 'a success clears the failing state');
    assert.equal(box.failures, 0);
    assert.equal((await drain(q.inner)).length, 30, 'every key reached the queue');
    await box.close();
  });

  test('batches hold at most batchSize keys, in the order the keys arrived', async () => {
    // arrange
    const q = new FlakyQueue();
    const box = new Outbox(q, { log: silentLogger, batchSize: 10, lingerMs: 50 });
    const keys = Array.from({ length: 35 }, (_, i) => `ns/k${String(i).padStart(2, '0')}`);
    // act
    for (const k of keys) box.add(msg(k, '1'));
    await until('outbox empty', () => box.depth === 0);
    // assert
    assert.ok(q.batches.every((b) => b.length <= 10), `batch sizes ${q.batches.map((b) => b.length).join(',')}`);
    assert.deepEqual(q.batches.flat(), keys.map((k) => `${k}@1`), 'keys sent out of arrival order');
    await box.close();
  });

  test('a newer cause for a key that is being sent is sent afterwards, not lost', async () => {
    // arrange
    const q = new FlakyQueue();
    let open!: () => void;
    q.gate = new Promise<void>((r) => (open = r));
    const box = new Outbox(q, { log: silentLogger, lingerMs: 1 });
    box.add(msg('ns/a', '1'));
    await sleep(20); // the send of rv 1 has started and is held at the gate
    // act
    box.add(msg('ns/a', '2'));
    open();
    q.gate = undefined;
    await until('outbox empty', () => box.depth === 0);
    // assert
    assert.deepEqual(q.batches, [['ns/a@1'], ['ns/a@2']], 'the newer cause was swallowed by the in-flight batch');
    await box.close();
  });

  test('close() flushes what is pending', async () => {
    // arrange
    const q = new FlakyQueue();
    const box = new Outbox(q, { log: silentLogger, lingerMs: 10_000 });
    for (let i = 0; i < 5; i++) box.add(msg(`ns/c${i}`, '1'));
    // act
    await box.close();
    // assert
    assert.equal(box.depth, 0);
    assert.equal((await drain(q.inner)).length, 5, 'close() did not send the lingering keys');
  });

  test('close() against a dead queue gives up at its deadline and keeps the keys (the next start relists)', async () => {
    // arrange
    const q = new FlakyQueue();
    q.failing = Number.POSITIVE_INFINITY;
    const box = new Outbox(q, { log: silentLogger, lingerMs: 10_000, maxBackoffMs: 20 });
    box.add(msg('ns/a', '1'));
    // act
    await box.close(100);
    // assert
    assert.equal(box.depth, 1, 'the unsent key was dropped');
  });

  test('a held key waits its hold, unless a message of the key without one replaces it; other keys go at once; decorate runs as it leaves', async () => {
    // arrange
    const q = new FlakyQueue();
    const decorated: string[] = [];
    const box = new Outbox(q, { log: silentLogger, decorate: (m) => (decorated.push(m.key), m) });
    // act
    box.add(msg('ns/held', '1'), 200);
    box.add(msg('ns/replaced', '1'), 10_000);
    box.add(msg('ns/free', '1'));
    await until('the free key sent', () => q.batches.flat().includes('ns/free@1'));
    const early = q.batches.flat();
    box.add(msg('ns/replaced', '2'));
    await until('the replaced key sent', () => q.batches.flat().includes('ns/replaced@2'));
    await until('the held key sent', () => q.batches.flat().includes('ns/held@1'));
    // assert
    assert.ok(!early.includes('ns/held@1') && !early.includes('ns/replaced@1'), `held keys left early: ${early}`);
    assert.ok(!q.batches.flat().includes('ns/replaced@1'), 'the newer message replaced the held one');
    assert.deepEqual([...decorated].sort(), ['ns/free', 'ns/held', 'ns/replaced']);
    await box.close();
  });
});
