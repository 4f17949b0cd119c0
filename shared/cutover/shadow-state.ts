/**
 * Shadow reconciles keep their expectations and migration leases apart from the real ones
 * (docs/cutover.md): a dry-run create never appears, so an expectation it recorded in the real
 * table would hold up the same key for minutes after a takeover, and a migration lease taken for a
 * dry-run migration would hold a real slot. The controllers' deps are built once per runtime, so
 * the switch is made per reconcile through an AsyncLocalStorage: inside {@link runShadowed} the
 * state calls go to the shadow store.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Expectations, Leases } from '../state/port.ts';

const shadowing = new AsyncLocalStorage<true>();

/** Runs `fn` (one shadow reconcile) with the shadow state. */
export function runShadowed<T>(fn: () => Promise<T>): Promise<T> {
  return shadowing.run(true, fn);
}

/** True inside {@link runShadowed}. */
export function isShadowed(): boolean {
  return shadowing.getStore() === true;
}

function switched<T extends object>(real: T, shadow: T): T {
  return new Proxy(real, {
    get(target, prop) {
      const from = isShadowed() ? shadow : target;
      const v = Reflect.get(from, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(from) : v;
    },
  });
}

/** Expectations that are `shadow`'s inside a shadow reconcile, `real`'s otherwise. */
export function switchedExpectations(real: Expectations, shadow: Expectations): Expectations {
  return switched(real, shadow);
}

/** Leases that are `shadow`'s inside a shadow reconcile, `real`'s otherwise. */
export function switchedLeases(real: Leases, shadow: Leases): Leases {
  return switched(real, shadow);
}
