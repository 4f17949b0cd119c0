/**
 * The StateStore conformance suite: the same tests for every implementation
 * (`registerStateConformance('sqlite', harness)`). A harness opens several stores on one shared
 * storage — separate connections / clients where the backend has them — so the racing tests put
 * their callers on different connections as well as on concurrent promises.
 *
 * Times are real epoch ms (T0 = now when the suite loads), moved by adding offsets: DynamoDB's
 * TTL works on the wall clock, and a fake 1970 `now` would have its items deleted under the test.
 */
import { after, before, describe } from 'node:test';
import type { StateStore } from '../../shared/state/port.ts';
import type { ConformanceContext } from './conformance-support.ts';
import { registerExpectationCases } from './conformance-expectations.ts';
import { registerFailureAndLeaseCases } from './conformance-leases.ts';
import { registerTraceCases } from './conformance-traces.ts';

/** Opens stores on one shared storage; `close()` tears the storage down after the suite. */
export interface StateHarness {
  open(): Promise<StateStore>;
  close(): Promise<void>;
}

/** Registers the whole suite under `describe(name)`. */
export function registerStateConformance(name: string, harness: () => Promise<StateHarness>): void {
  describe(`StateStore conformance: ${name}`, () => {
    let h: StateHarness | undefined;
    let pair: readonly [StateStore, StateStore] | undefined;
    const run = Math.random().toString(36).slice(2, 8);
    let n = 0;
    const ctx: ConformanceContext = {
      stores: () => {
        if (!pair) throw new Error('the conformance harness failed to open its stores (see the before() hook failure)');
        return pair;
      },
      unique: (prefix) => `${prefix}-${run}-${++n}`,
      t0: Math.floor(Date.now() / 1000) * 1000,
    };

    before(async () => {
      h = await harness();
      pair = [await h.open(), await h.open()];
    });
    after(async () => {
      for (const s of pair ?? []) await s.close();
      await h?.close();
    });

    registerExpectationCases(ctx);
    registerFailureAndLeaseCases(ctx);
    registerTraceCases(ctx);
  });
}
