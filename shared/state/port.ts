/**
 * The key-value state port (docs/architecture.md §3): expectations, per-key failure counts, cross-key
 * counters/leases. One implementation over SQLite (embedded), one over DynamoDB (AWS); one
 * conformance suite (`test/state/`) runs unchanged against both. Every mutation is a conditional
 * write, safe when many function instances race.
 *
 * `scope` separates the stores (KubeVirt keeps several: `vmi-pods`, `vmi-vmis`, `vm-vmis`,
 * `migration-pods`, …); `key` is the controller key (`namespace/name`).
 */
import type { Traces } from './traces.ts';

/** KubeVirt's ControllerExpectations record (reference.md §e). */
export interface ExpectationRecord {
  readonly add: number;
  readonly del: number;
  /** UID-tracked expected deletions (pod keys). */
  readonly deleteKeys: readonly string[];
  /** Epoch ms when the record was (re)set. Expired after EXPECTATIONS_TIMEOUT_MS. */
  readonly setAt: number;
}

export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

/** KubeVirt's `isExpired`: strictly more than 5 minutes since the record was (re)set. */
export function isExpectationExpired(record: Pick<ExpectationRecord, 'setAt'>, now: number): boolean {
  return now - record.setAt > EXPECTATIONS_TIMEOUT_MS;
}

/**
 * KubeVirt's `SatisfiedExpectations`: no record, nothing left to observe, or expired. The one rule
 * both stores and every expectations gate apply.
 */
export function isExpectationSatisfied(record: Pick<ExpectationRecord, 'add' | 'del' | 'setAt'> | undefined, now: number): boolean {
  return record === undefined || (record.add <= 0 && record.del <= 0) || isExpectationExpired(record, now);
}

/**
 * A failure count idle (no increment) for longer than this reads as 0 and is garbage-collected:
 * a key deleted while failing never gets its `reset`, and must not leak a row forever.
 */
export const FAILURE_COUNT_TTL_MS = 24 * 60 * 60 * 1000;

export interface Expectations {
  /**
   * Overwrites the counters: add = n, del = 0, setAt = now (KubeVirt's ExpectCreations). `now` is
   * epoch ms. Like KubeVirt, whose UID set is a separate store, `deleteKeys` is left as it was.
   */
  expectCreations(scope: string, key: string, n: number, now: number): Promise<void>;
  /** Overwrites the record: add = 0, deleteKeys = the set of keys, del = its size (UID-tracking ExpectDeletions). */
  expectDeletions(scope: string, key: string, deleteKeys: readonly string[], now: number): Promise<void>;
  /** Overwrites the counters with add/del (SetExpectations; 0/0 "lowers"); keeps `deleteKeys`. */
  setExpectations(scope: string, key: string, add: number, del: number, now: number): Promise<void>;
  /** add -= 1 if a record exists (may go negative); no-op otherwise. Atomic. */
  creationObserved(scope: string, key: string): Promise<void>;
  /** Removes `deleteKey` from the set and del -= 1, only if it was in the set. Atomic. */
  deletionObserved(scope: string, key: string, deleteKey: string): Promise<void>;
  /** No record, or add ≤ 0 && del ≤ 0, or older than 5 minutes at `now`. */
  satisfied(scope: string, key: string, now: number): Promise<boolean>;
  /**
   * The stored record, expired or not (judge with {@link isExpectationExpired}). A record expired
   * for longer than an hour may already be gone (DynamoDB TTL, SQLite sweep).
   */
  get(scope: string, key: string): Promise<ExpectationRecord | undefined>;
  delete(scope: string, key: string): Promise<void>;
  /**
   * Sum of `add` (negative values included, as upstream) over the unexpired records of a scope
   * (the migration controller's throttle). KubeVirt also counts expired records; a table cannot
   * keep those forever, and an expired record already counts as satisfied.
   */
  pendingCreations(scope: string, now: number): Promise<number>;
  /**
   * Records "about to create" only if no unexpired, unsatisfied record exists: the guard that
   * lets exactly one of N racing workers create the launcher pod. Returns false to the losers.
   *
   * With `seen`, also only if the record is still the one the caller's decision was made under:
   * `null` — there was none (a record set meanwhile, even one already satisfied, means another
   * worker created and may be seen to have: false); `{ setAt }` — that record, not re-set since
   * (a record gone meanwhile is taken too). Without it, any absent, satisfied or expired record.
   */
  tryExpectCreations(scope: string, key: string, n: number, now: number, seen?: ExpectationSeen): Promise<boolean>;
}

/** The record a decision was made under, for {@link Expectations.tryExpectCreations}: none (`null`) or the one set at `setAt`. */
export type ExpectationSeen = { readonly setAt: number } | null;

/** Per-key failure counts, for backoff and the dead-letter decision. */
export interface FailureCounts {
  /** Adds one and returns the new count (1 after a reset or after FAILURE_COUNT_TTL_MS idle). Atomic. */
  increment(scope: string, key: string, now: number): Promise<number>;
  /** The current count; with `now`, a count idle for longer than FAILURE_COUNT_TTL_MS reads as 0. */
  get(scope: string, key: string, now?: number): Promise<number>;
  reset(scope: string, key: string): Promise<void>;
}

/**
 * Leases: a bounded set of holders per counter (e.g. `migrations/cluster` limit 5,
 * `migrations/node/<node>` limit 2). Acquire is a conditional write that never lets the holder
 * count exceed the limit, even under racing writers; acquiring a lease the holder already has
 * succeeds again (idempotent). Leases expire at `ttlMs` so a crashed holder cannot leak one.
 */
export interface Leases {
  /** A lease is live while `now < expiresAt`; (re-)acquiring sets expiresAt = now + ttlMs. */
  acquire(counter: string, holder: string, limit: number, now: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease back; no-op when `holder` does not hold it. */
  release(counter: string, holder: string): Promise<void>;
  /** The live holders, sorted. */
  holders(counter: string, now: number): Promise<string[]>;
}

export interface StateStore {
  readonly expectations: Expectations;
  readonly failures: FailureCounts;
  readonly leases: Leases;
  /** Per-key reconcile traces (./traces.ts). */
  readonly traces: Traces;
  close(): Promise<void>;
}
