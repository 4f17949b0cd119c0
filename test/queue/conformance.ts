/**
 * The key queue conformance suite (docs/architecture.md §2): the same tests for every {@link KeyQueue}.
 * Each implementation's test file calls {@link queueConformance} with a harness factory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Controller, KeyMessage } from '../../shared/queue/message.ts';
import type { KeyQueue, ReceivedKey, RetryPolicy } from '../../shared/queue/port.ts';

export interface HarnessOptions {
  readonly retry?: RetryPolicy;
  readonly visibilityTimeoutMs?: number;
}

/** What a backend must offer the suite besides the port itself. */
export interface QueueHarness {
  readonly queue: KeyQueue;
  /** Puts a raw body on the controller's queue (how a malformed message arrives). */
  sendRaw(controller: Controller, body: string): Promise<void>;
  /** Lets `ms` pass for the queue (a fake clock, or a real wait plus running the timer forwarder). */
  advance(ms: number): Promise<void>;
  /**
   * Moves the queue's clock `ms` ahead without waiting (how a retry window passes in a test).
   * On SQS only our side's clock moves: backoffs and leases still run on the service's time.
   */
  skew(ms: number): Promise<void>;
  /** The queue's clock, epoch ms. */
  now(): number;
  /** Closes and opens the queue again on the same storage; absent where it means nothing. */
  /** A new instance over the same storage/queues, as after a process restart. */
  reopen: () => Promise<KeyQueue>;
  readonly caps: {
    /** Waiting duplicates of a key always become one delivery (SQLite); SQS: only within a receive. */
    readonly coalescesWaiting: boolean;
    /** Age of oldest covers visible messages too (SQS: only what this client holds in flight). */
    readonly ageOfVisible: boolean;
  };
  close(): Promise<void>;
}

export type HarnessFactory = (opts: HarnessOptions) => Promise<QueueHarness>;

const C: Controller = 'vmi';

/** A key message for `key` caused by an event at resourceVersion `rv`. */
export function keyMessage(key: string, rv: string | number, event = 'MODIFIED', controller: Controller = C): KeyMessage {
  const [namespace = '', name = ''] = key.split('/');
  return {
    v: 1,
    controller,
    key,
    cause: { kind: 'VirtualMachineInstance', namespace, name, uid: `uid-${name}`, resourceVersion: String(rv), event, seenAt: 1_000 },
  };
}

/** `m` carrying a one-read view stamped by relay `relay` at `seq`. */
export function withView(m: KeyMessage, seq: number, relay = 'relay-1'): KeyMessage {
  return { ...m, view: { reads: [{ resource: 'pods', namespace: 'ns', labelSelector: 'kubevirt.io', items: [{ metadata: { name: `p-${seq}`, resourceVersion: String(seq) } }] }], taken: { relay, seq } } };
}

/** Receives until `want` keys came or `rounds` receives returned nothing new. */
async function receiveSome(q: KeyQueue, want: number, waitMs = 200, rounds = 5, controller: Controller = C): Promise<ReceivedKey[]> {
  const out: ReceivedKey[] = [];
  for (let i = 0; i < rounds && out.length < want; i++) out.push(...(await q.receive(controller, want - out.length, waitMs)));
  return out;
}

/** Registers the conformance tests for one implementation. */
export function queueConformance(name: string, make: HarnessFactory): void {
  describe(`KeyQueue conformance: ${name}`, () => {
    async function withHarness(opts: HarnessOptions, body: (h: QueueHarness) => Promise<void>): Promise<void> {
      const h = await make(opts);
      try {
        await body(h);
      } finally {
        await h.close();
      }
    }

    test('delivers the events of one key in order, newest last', () =>
      withHarness({}, async (h) => {
        // arrange: one event in flight, two more arrive behind it
        await h.queue.send([keyMessage('ns/a', 1)]);
        const [first] = await receiveSome(h.queue, 1);
        assert.ok(first, 'the first event must be delivered');
        await h.queue.send([keyMessage('ns/a', 2), keyMessage('ns/a', 3)]);
        // act: the key is locked while in flight; then drain
        const whileLocked = await h.queue.receive(C, 10, 0);
        await h.queue.ack(C, first.receipt);
        const seen = [first.message.cause.resourceVersion];
        for (let i = 0; i < 10 && seen.at(-1) !== '3'; i++) {
          for (const rk of await h.queue.receive(C, 10, 300)) {
            seen.push(rk.message.cause.resourceVersion);
            await h.queue.ack(C, rk.receipt);
          }
        }
        // assert
        assert.deepEqual(whileLocked, [], 'a key in flight must not be handed out again');
        assert.deepEqual([...seen].sort(), seen, `resourceVersions must arrive in order: ${seen.join(',')}`);
        assert.equal(seen.at(-1), '3', 'the newest event must be delivered last');
      }));

    test('never hands one key to two concurrent consumers', () =>
      withHarness({}, async (h) => {
        // arrange: 4 keys × 3 events, 4 consumers
        const keys = ['ns/k0', 'ns/k1', 'ns/k2', 'ns/k3'];
        for (let rv = 1; rv <= 3; rv++) await h.queue.send(keys.map((k) => keyMessage(k, rv)));
        const busy = new Set<string>();
        const last = new Map<string, string>();
        const overlaps: string[] = [];
        // act
        const consumer = async (): Promise<void> => {
          for (let i = 0; i < 40 && keys.some((k) => last.get(k) !== '3'); i++) {
            for (const rk of await h.queue.receive(C, 2, 100)) {
              if (busy.has(rk.message.key)) overlaps.push(rk.message.key);
              busy.add(rk.message.key);
              await new Promise((r) => setTimeout(r, 5));
              last.set(rk.message.key, rk.message.cause.resourceVersion);
              busy.delete(rk.message.key);
              await h.queue.ack(C, rk.receipt);
            }
          }
        };
        await Promise.all([consumer(), consumer(), consumer(), consumer()]);
        // assert
        assert.deepEqual(overlaps, [], 'these keys were held by two consumers at once');
        assert.deepEqual(keys.map((k) => last.get(k)), ['3', '3', '3', '3'], 'every key must reach its newest event');
      }));

    test('coalesces waiting duplicates of a key, newest cause wins', () =>
      withHarness({}, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/a', 2), keyMessage('ns/b', 1), keyMessage('ns/a', 3)]);
        // act
        const got = await receiveSome(h.queue, 2, 300, 3);
        // assert
        const forA = got.filter((rk) => rk.message.key === 'ns/a');
        assert.equal(forA.length, 1, 'one batch must never carry two deliveries of one key');
        if (h.caps.coalescesWaiting) {
          assert.equal(forA[0]?.coalesced, 3, 'three waiting events must make one delivery');
          assert.equal(forA[0]?.message.cause.resourceVersion, '3', 'the newest cause must win');
        }
      }));

    test('a message sent again with an older view does not displace the fresher view it coalesces with', () =>
      withHarness({}, async (h) => {
        // arrange: the relay's view at seq 5, then a late copy of a message it sent at seq 3
        const fresh = withView(keyMessage('ns/a', 2), 5);
        const late = withView(keyMessage('ns/a', 1, 'RELIST'), 3);
        await h.queue.send([fresh]);
        await h.queue.send([late]);
        // act
        const got = (await receiveSome(h.queue, 1, 300, 3)).filter((rk) => rk.message.key === 'ns/a');
        // assert
        assert.equal(got.length, 1, 'one delivery of the key');
        if (got[0]!.coalesced > 1) {
          assert.equal(got[0]!.message.cause.event, 'RELIST', 'the newest cause still wins');
          assert.equal(got[0]!.message.view?.taken?.seq, 5, 'the view must be the fresher one, not the late copy\'s');
        }
      }));

    test('drops exact duplicates (same dedup id), keeps a new resourceVersion', () =>
      withHarness({}, async (h) => {
        // arrange: a duplicate before and after the first is acked
        await h.queue.send([keyMessage('ns/a', 7)]);
        await h.queue.send([keyMessage('ns/a', 7)]);
        const [first] = await receiveSome(h.queue, 1);
        assert.ok(first);
        await h.queue.ack(C, first.receipt);
        await h.queue.send([keyMessage('ns/a', 7)]);
        // act
        const dup = await h.queue.receive(C, 10, 200);
        await h.queue.send([keyMessage('ns/a', 8)]);
        const fresh = await receiveSome(h.queue, 1);
        // assert
        assert.equal(first.coalesced, 1, 'the duplicate must be dropped, not coalesced');
        assert.deepEqual(dup, [], 'a duplicate inside the window must be dropped even after ack');
        assert.equal(fresh[0]?.message.cause.resourceVersion, '8', 'a new resourceVersion is a new message');
      }));

    test('retries with exponential backoff, then dead-letters after maxAttempts', () =>
      // deadLetterAfterMs 0: no dead-letter window, so the count alone decides here (the window has its own tests below).
      withHarness({ retry: { baseDelayMs: 1000, maxDelayMs: 2000, maxAttempts: 4, deadLetterAfterMs: 0 } }, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1)]);
        const failure = { reason: 'ApiUnavailable', message: 'apiserver said 503' };
        const attempts: number[] = [];
        const delays: number[] = [];
        let early: ReceivedKey[] | undefined;
        let outcome = { deadLettered: false, delayMs: 0 };
        // act
        for (let i = 0; i < 4; i++) {
          const [rk] = await receiveSome(h.queue, 1, 300, 6);
          assert.ok(rk, `attempt ${i + 1} must be delivered`);
          attempts.push(rk.attempt);
          outcome = await h.queue.retryLater(C, rk.receipt, failure);
          if (!outcome.deadLettered) delays.push(outcome.delayMs);
          if (i === 0) early = await h.queue.receive(C, 1, 0);
          await h.advance(outcome.delayMs + 200);
        }
        const dead = await h.queue.listDeadLetters({ controller: C, key: 'ns/a' });
        // assert
        assert.deepEqual(attempts, [1, 2, 3, 4], 'attempt must count consecutive failures');
        assert.deepEqual(delays, [1000, 2000, 2000], 'backoff must double and be capped');
        assert.deepEqual(early, [], 'a key must not come back before its backoff');
        assert.equal(outcome.deadLettered, true, 'the last failure must dead-letter');
        assert.equal(dead.length, 1);
        assert.equal(dead[0]?.reason, 'ApiUnavailable');
        assert.equal(dead[0]?.attempts, 4);
        assert.deepEqual(await h.queue.receive(C, 1, 0), [], 'a dead-lettered key leaves the queue');
      }));

    test("a controller's wake delay (the pool's 1 s, KubeVirt's AddAfter): its key comes that much later, and an event inside the delay joins it", () =>
      withHarness({}, async (h) => {
        // arrange
        const pool: Controller = 'pool';
        const sentAt = h.now();
        await h.queue.send([keyMessage('ns/p', 1, 'MODIFIED', pool)]);
        // act
        const atOnce = await h.queue.receive(pool, 1, 0);
        await h.advance(500);
        const halfway = await h.queue.receive(pool, 1, 0);
        // On a real clock (SQS) a starved machine can take the whole delay to get here: then the
        // receive proves nothing about the delay, and only what it cannot have seen is asserted.
        const beforeDue = h.now() - sentAt < 1000;
        await h.queue.send([keyMessage('ns/p', 2, 'MODIFIED', pool)]);
        await h.advance(700);
        // (SQS delays each message and hands a group's next only after its first is settled.)
        const got: ReceivedKey[] = [];
        if (!beforeDue) {
          for (const rk of halfway) {
            got.push(rk);
            await h.queue.ack(pool, rk.receipt);
          }
        }
        for (let i = 0; i < 8 && got.at(-1)?.message.cause.resourceVersion !== '2'; i++) {
          for (const rk of await h.queue.receive(pool, 1, 300)) {
            got.push(rk);
            await h.queue.ack(pool, rk.receipt);
          }
        }
        // assert
        assert.deepEqual(atOnce, [], 'the key must not come before its delay');
        if (beforeDue) assert.deepEqual(halfway, [], 'the key must not come halfway through its delay');
        assert.equal(got.at(-1)?.message.cause.resourceVersion, '2', 'the event sent inside the delay must reach the controller');
        if (h.caps.coalescesWaiting) assert.equal(got[0]?.coalesced, 2, 'one delivery at the first event\'s time, carrying both');
      }));

    // The dead-letter window (docs/reliability.md, "Dead letters"): a transient failure dead-letters
    // only past maxAttempts AND deadLetterAfterMs of failing without a break.
    const WINDOW: RetryPolicy = { baseDelayMs: 1000, maxDelayMs: 1000, maxAttempts: 2, deadLetterAfterMs: 600_000 };
    const unavailable = { reason: 'ApiUnavailable', message: 'apiserver said 503' };
    /** Receives `key`'s next delivery and fails it transiently; waits out the backoff. */
    async function failNext(h: QueueHarness, key: string): Promise<{ rk: ReceivedKey; deadLettered: boolean }> {
      const [rk] = await receiveSome(h.queue, 1, 300, 6);
      assert.equal(rk?.message.key, key, `${key} must be delivered`);
      const out = await h.queue.retryLater(C, rk.receipt, unavailable);
      if (!out.deadLettered) await h.advance(out.delayMs + 200);
      return { rk, deadLettered: out.deadLettered };
    }

    test('transient failures past maxAttempts but inside the dead-letter window keep retrying', () =>
      withHarness({ retry: WINDOW }, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1)]);
        // act: twice maxAttempts failures, all within seconds of the first
        const runs = [];
        for (let i = 0; i < 4; i++) runs.push(await failNext(h, 'ns/a'));
        const [again] = await receiveSome(h.queue, 1, 300, 6);
        // assert
        assert.deepEqual(runs.map((r) => [r.rk.attempt, r.deadLettered]), [[1, false], [2, false], [3, false], [4, false]],
          'an outage shorter than the window must not dead-letter a key');
        assert.equal(again?.attempt, 5, 'the key is still on the queue, its failures still counted');
        assert.deepEqual(await h.queue.listDeadLetters({ controller: C }), []);
      }));

    test('a transient failure past both maxAttempts and the window dead-letters, with the run\'s first failure', () =>
      withHarness({ retry: WINDOW }, async (h) => {
        // arrange: two failures (maxAttempts) inside the window
        await h.queue.send([keyMessage('ns/a', 1)]);
        const first = await failNext(h, 'ns/a');
        const second = await failNext(h, 'ns/a');
        // act: the window passes while the key waits; its next attempt fails too
        await h.skew(WINDOW.deadLetterAfterMs);
        const third = await failNext(h, 'ns/a');
        const dead = await h.queue.listDeadLetters({ controller: C, key: 'ns/a' });
        // assert
        assert.deepEqual([first.deadLettered, second.deadLettered], [false, false], 'inside the window: retried');
        assert.deepEqual([third.rk.attempt, third.deadLettered], [3, true], 'past both: dead-lettered');
        assert.deepEqual(dead.map((d) => [d.reason, d.attempts]), [['ApiUnavailable', 3]]);
        assert.ok(dead[0]!.lastFailureAt - dead[0]!.firstFailureAt >= WINDOW.deadLetterAfterMs, 'the dead letter spans the run of failures');
        assert.deepEqual(await h.queue.receive(C, 1, 0), [], 'a dead-lettered key leaves the queue');
      }));

    test('a success ends the run of failures, also when newer events joined the retrying key', () =>
      withHarness({ retry: WINDOW }, async (h) => {
        // arrange: two failures; a newer event arrives while the key waits out its backoff
        await h.queue.send([keyMessage('ns/a', 1)]);
        await failNext(h, 'ns/a');
        const [failing] = await receiveSome(h.queue, 1, 300, 6);
        assert.ok(failing);
        const { delayMs } = await h.queue.retryLater(C, failing.receipt, unavailable);
        await h.queue.send([keyMessage('ns/a', 2)]);
        await h.advance(delayMs + 200);
        // act: whatever comes of the key (coalesced or one by one) succeeds; then a new event
        const succeeded: ReceivedKey[] = [];
        for (let rk = (await h.queue.receive(C, 10, 300))[0]; rk !== undefined; rk = (await h.queue.receive(C, 10, 300))[0]) {
          succeeded.push(rk);
          await h.queue.ack(C, rk.receipt);
        }
        const ackedAt = h.now();
        await h.queue.send([keyMessage('ns/a', 3)]);
        const afterSuccess = await failNext(h, 'ns/a');
        const [next] = await receiveSome(h.queue, 1, 300, 6);
        // assert
        assert.equal(succeeded[0]?.attempt, 3, 'the retrying key came back as its third attempt');
        assert.equal(succeeded.at(-1)?.message.cause.resourceVersion, '2', 'the newer event was delivered');
        assert.deepEqual([afterSuccess.rk.attempt, afterSuccess.rk.firstFailureAt], [1, undefined], 'a success resets the failure count');
        assert.equal(next?.attempt, 2);
        assert.ok((next?.firstFailureAt ?? 0) >= ackedAt - 1000, 'the new run of failures starts after the success, not at the old run');
      }));

    test('a permanent failure dead-letters at once, whatever the window', () =>
      withHarness({ retry: WINDOW }, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1)]);
        const [rk] = await receiveSome(h.queue, 1);
        assert.ok(rk);
        // act
        await h.queue.deadLetter(C, rk.receipt, { reason: 'InvalidInput', message: 'spec.domain: bad' });
        const dead = await h.queue.listDeadLetters({ controller: C, key: 'ns/a' });
        // assert
        assert.deepEqual(dead.map((d) => [d.reason, d.attempts]), [['InvalidInput', 1]]);
        assert.deepEqual(await h.queue.receive(C, 1, 0), []);
      }));

    test('a key whose consumers keep dying: redelivered inside the window, dead-lettered LeaseExpired past it', async () => {
      // Real time on SQS (whole seconds of visibility): a 1 s lease.
      const h = await make({ retry: WINDOW, visibilityTimeoutMs: 1_000 });
      try {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1)]);
        // act: three consumers die on it (nobody settles), past maxAttempts but inside the window
        const attempts: number[] = [];
        for (let i = 0; i < 3; i++) {
          const [rk] = await receiveSome(h.queue, 1, 300, 6);
          if (rk) attempts.push(rk.attempt);
          await h.advance(1_200);
        }
        // …then the window passes and the next consumer dies too
        const [last] = await receiveSome(h.queue, 1, 300, 6);
        await h.skew(WINDOW.deadLetterAfterMs + 10_000);
        await h.advance(1_200);
        const after = await h.queue.receive(C, 1, 500);
        const dead = await h.queue.listDeadLetters({ controller: C, key: 'ns/a' });
        // assert
        assert.deepEqual(attempts, [1, 2, 3], 'inside the window a lost lease is one more failed attempt, and the key comes back');
        assert.equal(last?.attempt, 4);
        assert.deepEqual(after, [], 'past both, the key is not handed out again');
        assert.deepEqual(dead.map((d) => d.reason), ['LeaseExpired']);
      } finally {
        await h.close();
      }
    });

    test('requeue-after fires later and does not hold back newer events', () =>
      withHarness({}, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1)]);
        const [rk] = await receiveSome(h.queue, 1);
        assert.ok(rk);
        // act
        await h.queue.requeueAfter(C, rk.receipt, 1);
        const beforeNewer = await h.queue.receive(C, 1, 0);
        await h.queue.send([keyMessage('ns/a', 2)]);
        const newer = await receiveSome(h.queue, 1);
        if (newer[0]) await h.queue.ack(C, newer[0].receipt);
        await h.advance(1300);
        const fired = await receiveSome(h.queue, 1, 300, 10);
        // assert
        assert.deepEqual(beforeNewer, [], 'the timer must not fire early');
        assert.equal(newer[0]?.message.cause.resourceVersion, '2', 'the newer event must come at once');
        assert.equal(fired[0]?.message.key, 'ns/a', 'the timer must re-enqueue the key');
        assert.equal(fired[0]?.message.cause.event, 'REQUEUE');
      }));

    test('dead-letters with a reason', () =>
      withHarness({}, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1)]);
        const got = await receiveSome(h.queue, 2);
        const a = got.find((rk) => rk.message.key === 'ns/a');
        assert.ok(a);
        // act
        await h.queue.deadLetter(C, a.receipt, { reason: 'FailedCreate', message: 'pod spec rejected' });
        const dead = await h.queue.listDeadLetters({ controller: C });
        // assert
        assert.deepEqual(
          dead.map((d) => [d.key, d.reason, d.message, (JSON.parse(d.body) as KeyMessage).cause.resourceVersion]),
          [['ns/a', 'FailedCreate', 'pod spec rejected', '1']],
        );
        assert.equal((await h.queue.depth(C)).deadLettered, 1);
        assert.deepEqual(await h.queue.listDeadLetters({ controller: 'vm' }), [], 'other controllers have their own DLQ');
      }));

    test('dead-letters a malformed message with reason MalformedMessage; other keys are unaffected', () =>
      withHarness({}, async (h) => {
        // arrange
        await h.sendRaw(C, '{not json');
        await h.sendRaw(C, JSON.stringify({ v: 2, controller: C, key: 'ns/x' }));
        await h.queue.send([keyMessage('ns/b', 1)]);
        // act
        const got = await receiveSome(h.queue, 3, 200, 3);
        const dead = await h.queue.listDeadLetters({ controller: C });
        // assert
        assert.deepEqual(got.map((rk) => rk.message.key), ['ns/b'], 'only the good key must be delivered');
        assert.deepEqual(dead.map((d) => d.reason), ['MalformedMessage', 'MalformedMessage']);
        assert.deepEqual(dead.map((d) => d.body).sort(), ['{not json', JSON.stringify({ v: 2, controller: C, key: 'ns/x' })].sort());
      }));

    test('replays dead letters (dry run, by key); replaying twice does no harm', () =>
      withHarness({}, async (h) => {
        // arrange: two dead keys and a malformed one
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1)]);
        for (const rk of await receiveSome(h.queue, 2)) await h.queue.deadLetter(C, rk.receipt, { reason: 'X', message: 'x' });
        await h.sendRaw(C, 'garbage');
        assert.deepEqual(await h.queue.receive(C, 10, 100), []);
        // act
        const dry = await h.queue.replay({ controller: C, dryRun: true });
        const one = await h.queue.replay({ controller: C, key: 'ns/a' });
        const again = await h.queue.replay({ controller: C, key: 'ns/a' });
        const got = await receiveSome(h.queue, 2, 200, 3);
        // assert
        assert.deepEqual(dry.moved.map((m) => m.key).sort(), ['ns/a', 'ns/b'], 'dry run reports what would move');
        assert.equal(dry.skipped.length, 1, 'the malformed dead letter cannot be replayed');
        assert.deepEqual(one.moved, [{ controller: C, key: 'ns/a' }]);
        assert.deepEqual(again.moved, [], 'a second replay finds nothing to move');
        assert.deepEqual(got.map((rk) => [rk.message.key, rk.message.cause.event]), [['ns/a', 'REPLAY']]);
        assert.deepEqual((await h.queue.listDeadLetters({ controller: C })).map((d) => d.key).sort(), ['', 'ns/b'].sort());
      }));

    test('reports depth: visible, in flight, delayed, dead-lettered, age of oldest', () =>
      withHarness({}, async (h) => {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1), keyMessage('ns/c', 1), keyMessage('ns/d', 1)]);
        const got = await receiveSome(h.queue, 3);
        const [x, y] = got;
        assert.ok(x && y);
        await h.queue.requeueAfter(C, x.receipt, 600);
        await h.queue.deadLetter(C, y.receipt, { reason: 'X', message: 'x' });
        await h.advance(1000);
        // act
        const d = await h.queue.depth(C);
        // assert
        assert.deepEqual(
          { visible: d.visible, inFlight: d.inFlight, delayed: d.delayed, deadLettered: d.deadLettered },
          { visible: 1, inFlight: 1, delayed: 1, deadLettered: 1 },
        );
        assert.ok(d.oldestAgeSeconds >= 1, `age of oldest must count the in-flight key: ${d.oldestAgeSeconds}`);
        const empty = await h.queue.depth('migration');
        assert.deepEqual([empty.visible, empty.inFlight, empty.delayed, empty.deadLettered, empty.oldestAgeSeconds], [0, 0, 0, 0, 0]);
      }));

    test('a live consumer keeps its key past the lease by extending it; a lapsed receipt cannot be extended', async () => {
      // Real time on SQS (whole seconds of visibility): a 2 s lease.
      const h = await make({ visibilityTimeoutMs: 2_000 });
      try {
        // arrange
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1)]);
        const [a, b] = await receiveSome(h.queue, 2, 0);
        assert.ok(a && b);
        assert.equal(h.queue.leaseMs, 2_000);
        // act: a's consumer beats twice, b's does not
        await h.advance(1_200);
        const first = await h.queue.extendLease(C, a.receipt);
        await h.advance(1_200);
        const second = await h.queue.extendLease(C, a.receipt);
        const again = await h.queue.receive(C, 10, 0);
        // assert
        assert.deepEqual([first, second], [true, true]);
        assert.deepEqual(again.map((rk) => [rk.message.key, rk.attempt]), [[b.message.key, 2]], 'only the key nobody extended came back, as a failed attempt');
        assert.equal(await h.queue.extendLease(C, b.receipt), false, "the lapsed receipt of b's first delivery");
        await h.queue.ack(C, a.receipt);
        for (const rk of again) await h.queue.ack(C, rk.receipt);
        assert.equal((await h.queue.depth(C)).inFlight, 0);
      } finally {
        await h.close();
      }
    });

    test('loses nothing across a restart: an orphaned in-flight key comes back after its lease', async () => {
      // Short lease and timer: on SQS time is real (the harness's advance sleeps).
      const h = await make({ visibilityTimeoutMs: 2_000 });
      try {
        // arrange: a consumer takes a, then the process "dies"; a timer and a dead letter exist
        await h.queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1), keyMessage('ns/c', 1), keyMessage('ns/d', 1)]);
        const got = await h.queue.receive(C, 3, 0);
        assert.equal(got.length, 3);
        await h.queue.requeueAfter(C, got[1]!.receipt, 2);
        await h.queue.deadLetter(C, got[2]!.receipt, { reason: 'X', message: 'x' });
        // act
        const q = await h.reopen();
        const before = await q.receive(C, 10, 0);
        for (const rk of before) await q.ack(C, rk.receipt);
        await h.advance(3_100);
        const after = await q.receive(C, 10, 0);
        // assert
        assert.deepEqual(before.map((rk) => rk.message.key), ['ns/d'], 'the untouched key is there at once');
        assert.deepEqual(after.map((rk) => [rk.message.key, rk.attempt]).sort(), [['ns/a', 2], ['ns/b', 1]],
          'the orphan returns after its lease (as a failed attempt), the timer fires');
        assert.equal((await q.listDeadLetters()).length, 1, 'the dead letter survives');
      } finally {
        await h.close();
      }
    });
  });
}
