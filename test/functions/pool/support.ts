/**
 * Test support for the pool reconcile against the sandbox API server: a client as identity
 * `pool-controller` (the audit log tells its calls from the test's own set-up as `test`), the
 * embedded SQLite state store, a controllable clock and a fixed random source, and "reconcile
 * until settled".
 */
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { PoolDeps } from '../../../functions/pool/deps.ts';
import { reconcilePool } from '../../../functions/pool/reconcile.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { Outcome } from '../../../shared/reconcile/outcome.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';

export const CONTROLLER = 'pool-controller';

export interface Harness {
  readonly deps: PoolDeps;
  /** The test's own client (identity `test`): set-up, and playing the VM controller and virt-handler. */
  readonly kube: KubeClient;
  readonly state: SqliteStateStore;
  advance(ms: number): void;
}

export function harness(server: ApiServer, start = Date.parse('2026-03-01T12:00:00Z')): Harness {
  let now = start;
  const state = openSqliteState();
  const deps: PoolDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER)),
    expectations: state.expectations,
    now: () => now,
    random: () => 0.5,
    log: { info: () => undefined, warn: () => undefined },
  };
  return { deps, kube: createKubeClient(server.kubeConfig('test')), state, advance: (ms) => (now += ms) };
}

/** `verb resource[/sub] name` for every write the controller made, events as `event Reason`. */
export function actions(server: ApiServer): string[] {
  return server.audit.query({ identity: CONTROLLER }).map((e) => {
    if (e.resource === 'events') return `event ${String((e.object as { reason?: unknown }).reason)}`;
    return `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`;
  });
}

/** Writes only, events left out. */
export function objectActions(server: ApiServer): string[] {
  return actions(server).filter((a) => !a.startsWith('event '));
}

export interface Settled {
  readonly passes: number;
  readonly outcomes: Array<Outcome | string>;
}

/**
 * Reconciles `key` until a pass writes nothing and ends without an error (the serverless "queue
 * is empty"); bounded, so a controller that never settles fails the test.
 */
export async function reconcileUntilSettled(server: ApiServer, h: Harness, key: string, maxPasses = 10): Promise<Settled> {
  const outcomes: Array<Outcome | string> = [];
  for (let pass = 1; pass <= maxPasses; pass++) {
    const before = server.audit.query({ identity: CONTROLLER }).length;
    let failed = false;
    try {
      outcomes.push(await reconcilePool(key, h.deps));
    } catch (err) {
      outcomes.push(`error: ${err instanceof Error ? err.message : String(err)}`);
      failed = true;
    }
    if (!failed && server.audit.query({ identity: CONTROLLER }).length === before) return { passes: pass, outcomes };
  }
  throw new Error(`${key} did not settle in ${maxPasses} passes: ${JSON.stringify(outcomes)}`);
}
