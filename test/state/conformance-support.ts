/** Shared by the conformance case files (kept apart from conformance.ts to avoid an import cycle). */
import type { StateStore } from '../../shared/state/port.ts';

/** What the case files get: two stores on the same storage and a unique-name generator. */
export interface ConformanceContext {
  /** Store A and store B (a second connection to the same storage). */
  stores(): readonly [StateStore, StateStore];
  /** A name no other test uses, so tests never see each other's records. */
  unique(prefix: string): string;
  /** The suite's time origin, epoch ms, a whole second. */
  readonly t0: number;
}

/** Runs `count` calls of `fn` at once, alternating between the two stores; results in call order. */
export function race<T>(
  stores: readonly [StateStore, StateStore],
  count: number,
  fn: (store: StateStore, i: number) => Promise<T>,
): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => fn(stores[i % 2] as StateStore, i)));
}
