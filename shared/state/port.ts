/**
 * The key-value state port (DESIGN.md §3): expectations, per-key failure counts, cross-key
 * counters/leases. One implementation over SQLite (embedded), one over DynamoDB (AWS); one
 * conformance suite (`test/state/`) runs unchanged against both. Every mutation is a conditional
 * write, safe when many function instances race.
 *
 * `scope` separates the stores (KubeVirt keeps several: `vmi-pods`, `vmi-vmis`, `vm-vmis`,
 * `migration-pods`, …); `key` is the controller key (`namespace/name`).
 */

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

export interface Expectations {
  /** Overwrites the record: add = n, del = 0 (KubeVirt's ExpectCreations). `now` is epoch ms. */
  expectCreations(scope: string, key: string, n: number, now: number): Promise<void>;
  /** Overwrites the record: del = keys.length, deleteKeys = keys (UID-tracking ExpectDeletions). */
  expectDeletions(scope: string, key: string, deleteKeys: readonly string[], now: number): Promise<void>;
  /** Overwrites the record with add/del (SetExpectations; 0/0 "lowers"). */
  setExpectations(scope: string, key: string, add: number, del: number, now: number): Promise<void>;
  /** add -= 1 if a record exists (may go negative); no-op otherwise. Atomic. */
  creationObserved(scope: string, key: string): Promise<void>;
  /** Removes `deleteKey` from the set and del -= 1, only if it was in the set. Atomic. */
  deletionObserved(scope: string, key: string, deleteKey: string): Promise<void>;
  /** No record, or add ≤ 0 && del ≤ 0, or older than 5 minutes at `now`. */
  satisfied(scope: string, key: string, now: number): Promise<boolean>;
  get(scope: string, key: string): Promise<ExpectationRecord | undefined>;
  delete(scope: string, key: string): Promise<void>;
  /** Sum of `add` over unexpired records of a scope (the migration controller's throttle). */
  pendingCreations(scope: string, now: number): Promise<number>;
  /**
   * Records "about to create" only if no unexpired, unsatisfied record exists: the guard that
   * lets exactly one of N racing workers create the launcher pod. Returns false to the losers.
   */
  tryExpectCreations(scope: string, key: string, n: number, now: number): Promise<boolean>;
}

/** Per-key failure counts, for backoff and the dead-letter decision. */
export interface FailureCounts {
  increment(scope: string, key: string, now: number): Promise<number>;
  get(scope: string, key: string): Promise<number>;
  reset(scope: string, key: string): Promise<void>;
}

/**
 * Leases: a bounded set of holders per counter (e.g. `migrations/cluster` limit 5,
 * `migrations/node/<node>` limit 2). Acquire is a conditional write that never lets the holder
 * count exceed the limit, even under racing writers; acquiring a lease the holder already has
 * succeeds again (idempotent). Leases expire at `ttlMs` so a crashed holder cannot leak one.
 */
export interface Leases {
  acquire(counter: string, holder: string, limit: number, now: number, ttlMs: number): Promise<boolean>;
  release(counter: string, holder: string): Promise<void>;
  holders(counter: string, now: number): Promise<string[]>;
}

export interface StateStore {
  readonly expectations: Expectations;
  readonly failures: FailureCounts;
  readonly leases: Leases;
  close(): Promise<void>;
}
