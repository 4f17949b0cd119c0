/**
 * Input checks and constants shared by every StateStore implementation, so that both reject the
 * same inputs the same way and garbage-collect on the same schedule.
 */
import { InvalidInputError } from '../errors.ts';

/**
 * How long past its logical expiry an item is kept before garbage collection (DynamoDB `ttl`,
 * SQLite `sweep`). Logic never depends on the deletion: it compares times itself (DynamoDB TTL
 * deletes lazily, within days); the grace only keeps `get` of a just-expired record stable.
 */
export const GC_GRACE_MS = 60 * 60 * 1000;

/** A lease counter is garbage-collected this long after its last acquire (see docs/state.md). */
export const LEASE_COUNTER_GC_MS = 24 * 60 * 60 * 1000;

/** `value` must be a non-empty string. */
export function requireName(field: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidInputError(field, 'must be a non-empty string');
}

/** `value` must be a safe integer ≥ 0 (a count of expected creations/deletions, a limit). */
export function requireCount(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new InvalidInputError(field, `must be an integer >= 0, got ${value}`);
}

/** `value` must be a finite epoch-ms time (or duration). */
export function requireTime(field: string, value: number): void {
  if (!Number.isFinite(value)) throw new InvalidInputError(field, `must be a finite number of milliseconds, got ${value}`);
}

/** The distinct delete keys, sorted (KubeVirt keeps them in a set: del = the set's size). */
export function uniqueKeys(keys: readonly string[]): string[] {
  keys.forEach((k, i) => requireName(`deleteKeys[${i}]`, k));
  return [...new Set(keys)].sort();
}
