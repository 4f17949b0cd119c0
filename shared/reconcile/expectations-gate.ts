/**
 * The expectations gate every controller passes before it writes (KubeVirt's
 * `ControllerExpectations`, docs/state.md): a pass may create or delete only once what earlier
 * passes created or deleted is visible, or a second launcher pod, VMI or VM would follow.
 *
 * KubeVirt lowers its in-memory records from informer events, and its cache never lags behind its
 * own writes. A stateless function lowers the durable records from what its reads show — and never
 * for its own write without seeing it — so the gate is, for every controller:
 *
 * 1. lower the records from this pass's observation (`lower`: what counts as seen is the
 *    controller's: a controlled pod listed, a VM gone, names recorded by a burst…);
 * 2. still unsatisfied, and the first read may have come from a lagging cache: one quorum read
 *    (`reobserve`) and lower again;
 * 3. still unsatisfied: the pass that recorded them may be alive (its write still to land) —
 *    wait, and look again when the records may be taken over; per-key serialization means that
 *    after `takeoverMs` (the function timeout in production; at most, and by default, the 5-minute
 *    expiry) the pass that wrote them is gone, so they are dropped and this pass goes on.
 *
 * The same module holds {@link claimCreations}: the conditional record a pass takes before a create
 * that no read-based gate guards (an attachment pod, a backend-storage PVC).
 */
import { EXPECTATIONS_TIMEOUT_MS, isExpectationExpired, isExpectationSatisfied, type ExpectationRecord, type Expectations, type ExpectationSeen } from '../state/port.ts';
import type { V1Pod } from '@kubernetes/client-node';
import type { ReconcileLogger } from '../metrics/log.ts';
import { podKey } from '../predicates/pods.ts';

/** What the gate needs of a controller's deps. */
export interface GateDeps {
  readonly expectations: Expectations;
  /** Epoch ms on the controller's clock. */
  readonly now: () => number;
  /** Simulated ms per wall-clock ms of `now`: the wait is on the queue's wall clock. */
  readonly clockSpeed?: number | undefined;
  /** After how long (ms of `now`) an unsatisfied record is a dead pass's; at most, and by default, the 5-minute expiry. */
  readonly takeoverMs?: number | undefined;
  readonly log: ReconcileLogger;
}

/** One gate: the key's records, and how an observation lowers them. */
export interface Gate<O> {
  readonly key: string;
  /** The scopes of the key's records; lowered, waited for and taken over together. */
  readonly scopes: readonly string[];
  /** What the records are of, for the takeover's log line ("pod", "VMI", …). */
  readonly what: string;
  /**
   * Lowers the records from what `observed` shows; true when every scope is satisfied.
   * `records` are the records as this pass first read them (undefined: none), in `scopes` order.
   */
  readonly lower: (observed: O, records: readonly (ExpectationRecord | undefined)[]) => Promise<boolean>;
  /** A quorum read, when the first observation leaves doubt. Without it the first read is final. */
  readonly reobserve?: () => Promise<O>;
  /**
   * A satisfied record is kept until its TTL: some pass saw the write it stands for. This pass's
   * read may predate that write (it raced that pass, or its delivery is older than the write):
   * with this set, a satisfied record still costs one quorum read before the pass acts.
   */
  readonly rereadWhenSatisfied?: boolean;
}

/**
 * The gate's answer. `pass`: act on `observed` (`fresh` when a quorum read replaced the first
 * observation), under `decidedUnder` — the first scope's record as this pass read it, which a
 * conditional create must still find (Expectations.tryExpectCreations). `wait`: requeue after
 * `seconds` (wall clock).
 */
export type GateResult<O> =
  | { readonly kind: 'pass'; readonly observed: O; readonly fresh: boolean; readonly decidedUnder: ExpectationSeen }
  | { readonly kind: 'wait'; readonly observed: O; readonly seconds: number };

/** Runs `gate` on `observed`. */
export async function expectationsGate<O>(gate: Gate<O>, observed: O, deps: GateDeps): Promise<GateResult<O>> {
  const now = deps.now();
  const e = deps.expectations;
  const records = await Promise.all(gate.scopes.map((s) => e.get(s, gate.key)));
  const first = records[0];
  const decidedUnder: ExpectationSeen = first ? { setAt: first.setAt } : null;
  if (records.every((r) => r === undefined)) return { kind: 'pass', observed, fresh: false, decidedUnder };
  if (records.every((r) => isExpectationSatisfied(r, now))) {
    if (gate.rereadWhenSatisfied && gate.reobserve) return { kind: 'pass', observed: await gate.reobserve(), fresh: true, decidedUnder };
    return { kind: 'pass', observed, fresh: false, decidedUnder };
  }
  if (await gate.lower(observed, records)) return { kind: 'pass', observed, fresh: false, decidedUnder };
  let o = observed;
  if (gate.reobserve) {
    o = await gate.reobserve();
    if (await gate.lower(o, records)) return { kind: 'pass', observed: o, fresh: true, decidedUnder };
  }
  // The records still waited for: the newest decides when they may be taken over.
  const waiting = (await Promise.all(gate.scopes.map((s) => e.get(s, gate.key)))).filter((r): r is ExpectationRecord => r !== undefined && !isExpectationSatisfied(r, now));
  const setAt = Math.max(0, ...waiting.map((r) => r.setAt));
  const takeoverMs = takeoverAfter(deps);
  if (now - setAt >= takeoverMs) {
    deps.log.warn(`taking over a ${gate.what} expectation that was never observed`, { key: gate.key, setAt });
    for (const s of gate.scopes) await e.delete(s, gate.key);
    return { kind: 'pass', observed: o, fresh: o !== observed, decidedUnder: null };
  }
  return { kind: 'wait', observed: o, seconds: waitSeconds(setAt + takeoverMs - now, deps) };
}

/**
 * The gate of a controller whose creates are observed by their own answers (the evacuation
 * controller, the workload updater: they read the API, not a lagging cache, and each create's
 * answer lowers the record at once). An unsatisfied record therefore means a pass died between
 * the record and its creates: nothing a read could lower, so the key waits until the record may
 * be taken over.
 */
export function answeredCreations(scope: string, key: string, what: string): Gate<undefined> {
  return { key, scopes: [scope], what, lower: async () => false };
}

/**
 * The answer to a conditional creation record: `claimed` (this pass creates), or `wait`: another
 * pass holds a live record — or held one that is now taken over (dropped), and the next pass claims.
 */
export type Claim = { readonly kind: 'claimed' } | { readonly kind: 'wait'; readonly seconds: number };

/** How long a losing claim waits: while the other record is live, and after it was taken over. */
export interface ClaimWaits {
  readonly whileLive: number;
  readonly afterTakeover: number;
}

/**
 * Records `n` creations for `key` before they are made, conditionally: of racing passes one
 * claims. A live unsatisfied record means an earlier pass created and no read shows it yet: wait;
 * one older than the takeover time was left by a pass that died before its create: drop it, and
 * look again soon (the next pass claims).
 */
export async function claimCreations(deps: GateDeps, scope: string, key: string, n: number, waits: ClaimWaits): Promise<Claim> {
  const now = deps.now();
  if (await deps.expectations.tryExpectCreations(scope, key, n, now)) return { kind: 'claimed' };
  const record = await deps.expectations.get(scope, key);
  if (record && !isExpectationSatisfied(record, now) && now - record.setAt < takeoverAfter(deps)) return { kind: 'wait', seconds: waits.whileLive };
  await deps.expectations.delete(scope, key);
  return { kind: 'wait', seconds: waits.afterTakeover };
}

/**
 * The pod rule of a gate's `lower` (the VMI's launcher pods, a migration's target pods): a
 * creation is observed once a controlled pod is listed, a deletion once the pod is gone or
 * terminating. True when the record is then satisfied.
 */
export async function lowerFromPods(deps: GateDeps, scope: string, key: string, record: ExpectationRecord | undefined, pods: readonly V1Pod[]): Promise<boolean> {
  if (!record) return true;
  const e = deps.expectations;
  if (record.add > 0 && pods.length > 0) await e.creationObserved(scope, key);
  const present = new Map(pods.map((p) => [podKey(p), p]));
  for (const k of record.deleteKeys) {
    const p = present.get(k);
    if (!p || p.metadata?.deletionTimestamp) await e.deletionObserved(scope, key, k);
  }
  return e.satisfied(scope, key, deps.now());
}

/** A record not yet expired and still waiting for something. */
export function isPending(record: ExpectationRecord | undefined, now: number): record is ExpectationRecord {
  return record !== undefined && !isExpectationExpired(record, now) && (record.add > 0 || record.del > 0);
}

function takeoverAfter(deps: GateDeps): number {
  return Math.min(deps.takeoverMs ?? EXPECTATIONS_TIMEOUT_MS, EXPECTATIONS_TIMEOUT_MS);
}

/** `ms` on `now`'s clock as whole wall-clock seconds, at least one. */
function waitSeconds(ms: number, deps: GateDeps): number {
  return Math.max(1, Math.ceil(ms / (deps.clockSpeed ?? 1) / 1000));
}
