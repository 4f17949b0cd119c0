/**
 * Trace cases of the conformance suite: what a reconcile recorded reads back as it was written,
 * oldest first; a key keeps only its last N entries; entries past the TTL are not returned;
 * keys and controllers are separate; a batch (one invocation's entries) reads back per key, also
 * across hours.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { TRACE_ENTRIES_PER_KEY, TRACE_TTL_MS, type TraceEntry } from '../../shared/state/traces.ts';
import type { ConformanceContext } from './conformance-support.ts';

/** An entry as the reconcile path writes it, for `controller`'s `key`, started at `at`. */
export function traceEntry(controller: string, key: string, at: number, over: Partial<TraceEntry> = {}): TraceEntry {
  const [namespace = '', name = ''] = key.split('/');
  return {
    controller,
    key,
    cause: { kind: 'VirtualMachineInstance', namespace, name, resourceVersion: String(at % 100_000), event: 'MODIFIED', seenAt: at - 20 },
    enqueuedAt: at - 10,
    receivedAt: at,
    attempt: 1,
    coalesced: 1,
    outcome: { kind: 'done' },
    reads: 2,
    writes: [{ verb: 'create', resource: 'pods', namespace, name: `virt-launcher-${name}-abcde`, code: 201 }],
    durationMs: 7,
    ...over,
  };
}

export function registerTraceCases(ctx: ConformanceContext): void {
  const { t0, unique } = ctx;
  const ta = () => ctx.stores()[0].traces;
  const tb = () => ctx.stores()[1].traces;

  describe('traces', () => {
    test('a recorded entry reads back whole, from the other connection', async () => {
      // arrange
      const controller = unique('vmi');
      const entry = traceEntry(controller, 'ns/a', t0, {
        outcome: { kind: 'requeue', afterSeconds: 30, why: 'waiting on pod expectations' },
        writes: [
          { verb: 'create', resource: 'pods', namespace: 'ns', name: 'virt-launcher-a-x', code: 201 },
          { verb: 'patch', resource: 'virtualmachineinstances/status', namespace: 'ns', name: 'a', code: 409 },
        ],
      });
      // act
      await ta().record(entry, t0);
      // assert
      assert.deepEqual(await tb().recent(controller, 'ns/a', t0 + 1), [entry]);
    });

    test('entries come back oldest first; other keys and controllers are separate', async () => {
      // arrange
      const controller = unique('vmi');
      for (let i = 0; i < 3; i++) await ta().record(traceEntry(controller, 'ns/a', t0 + i * 10, { attempt: i + 1 }), t0 + i * 10);
      await ta().record(traceEntry(controller, 'ns/b', t0), t0);
      await ta().record(traceEntry(unique('vm'), 'ns/a', t0), t0);
      // act
      const got = await tb().recent(controller, 'ns/a', t0 + 100);
      // assert
      assert.deepEqual(got.map((e) => e.attempt), [1, 2, 3]);
      assert.deepEqual(await tb().recent(controller, 'ns/none', t0 + 100), [], 'a key never reconciled has no trace');
    });

    test(`a key keeps its last ${TRACE_ENTRIES_PER_KEY} entries; a limit takes the newest`, async () => {
      // arrange
      const controller = unique('vmi');
      const total = TRACE_ENTRIES_PER_KEY + 5;
      for (let i = 0; i < total; i++) await (i % 2 ? ta() : tb()).record(traceEntry(controller, 'ns/a', t0 + i, { attempt: i }), t0 + i);
      // act
      const all = await ta().recent(controller, 'ns/a', t0 + total);
      const last3 = await ta().recent(controller, 'ns/a', t0 + total, 3);
      // assert
      assert.equal(all.length, TRACE_ENTRIES_PER_KEY);
      assert.equal(all[0]?.attempt, 5, 'the 5 oldest fell out');
      assert.equal(all.at(-1)?.attempt, total - 1);
      assert.deepEqual(last3.map((e) => e.attempt), [total - 3, total - 2, total - 1]);
    });

    test('an entry past its TTL is not returned', async () => {
      // arrange
      const controller = unique('vmi');
      await ta().record(traceEntry(controller, 'ns/a', t0), t0);
      await ta().record(traceEntry(controller, 'ns/a', t0 + 60_000, { attempt: 2 }), t0 + 60_000);
      // act
      const got = await tb().recent(controller, 'ns/a', t0 + TRACE_TTL_MS + 1);
      // assert
      assert.deepEqual(got.map((e) => e.attempt), [2]);
    });

    test('one batch of several keys and controllers reads back per key, in the order reconciled', async () => {
      // arrange
      const controller = unique('vmi');
      const other = unique('vm');
      const batch = [
        traceEntry(controller, 'ns/a', t0 + 3, { attempt: 2 }),
        traceEntry(controller, 'ns/b', t0 + 1),
        traceEntry(controller, 'ns/a', t0 + 1, { attempt: 1 }),
        traceEntry(other, 'ns/a', t0 + 2),
      ];
      // act
      await ta().recordBatch(batch, t0 + 10);
      await ta().recordBatch([], t0 + 10);
      // assert
      assert.deepEqual(await tb().recent(controller, 'ns/a', t0 + 20), [batch[2], batch[0]]);
      assert.deepEqual(await tb().recent(controller, 'ns/b', t0 + 20), [batch[1]]);
      assert.deepEqual(await tb().recent(other, 'ns/a', t0 + 20), [batch[3]]);
    });

    test('batches hours apart are read back together, newest last; a limit takes the newest across them', async () => {
      // arrange
      const controller = unique('vmi');
      const hour = 60 * 60 * 1000;
      for (let i = 0; i < 4; i++) {
        const at = t0 + i * 1.5 * hour;
        await (i % 2 ? ta() : tb()).recordBatch([traceEntry(controller, 'ns/a', at, { attempt: i + 1 }), traceEntry(controller, `ns/x${i}`, at)], at + 5);
      }
      const now = t0 + 4.5 * hour;
      // act
      const all = await tb().recent(controller, 'ns/a', now);
      const last2 = await tb().recent(controller, 'ns/a', now, 2);
      // assert
      assert.deepEqual(all.map((e) => e.attempt), [1, 2, 3, 4]);
      assert.deepEqual(last2.map((e) => e.attempt), [3, 4]);
    });

    test('an empty controller or key is refused', async () => {
      await assert.rejects(ta().record(traceEntry('', 'ns/a', t0), t0), InvalidInputError);
      await assert.rejects(ta().recent('vmi', '', t0), InvalidInputError);
      await assert.rejects(ta().recordBatch([traceEntry('vmi', '', t0)], t0), InvalidInputError);
    });
  });
}
