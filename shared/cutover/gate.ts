/**
 * The fence every reconcile passes (docs/cutover.md): may this process write now? Answered from
 * virt-controller's Lease, read at most once per {@link DEFAULT_LEASE_CACHE_MS} per process (one
 * GET shared by every worker, whatever the reconcile rate), so it costs nothing per reconcile.
 *
 * - `write`: the Lease is ours, not being handed back, the old leader's renew deadline has passed
 *   ({@link WRITABLE_AFTER}), and our own last renewal is younger than our renew deadline (a relay
 *   that stopped renewing stops the functions too, before any candidate may take the Lease over);
 * - `overdue`: the Lease names us (not handed back, the takeover wait over) and has not lapsed, but
 *   our last renewal is older than our renew deadline (a relay late to renew: a loaded machine, a
 *   slow API server). Nothing is written, and the key stays ours: it is retried shortly, never
 *   dropped — no other controller acts on it meanwhile, and our keeper sees no change of holder
 *   that would make it re-send every key (client-go's leader would exit and list everything anew);
 * - `shadow`: not writable, and the deployment runs in shadow mode: every write is a dry run;
 * - `fenced`: not writable, not shadowing: nothing is written at all.
 *
 * A cached answer is conservative: renewals only move `renewedAt` forward, so a view up to one
 * cache period old ends our writes early, never late.
 */
import { KUBEVIRT_LEADER_TIMINGS, viewOf, type LeaderTimings, type LeaseView } from './lease.ts';
import type { CoordinationLease } from '../api/resources.ts';

export type WriteMode = 'write' | 'overdue' | 'shadow' | 'fenced';

/** How long one read of the Lease is used. */
export const DEFAULT_LEASE_CACHE_MS = 1000;

export interface CutoverGateOptions {
  /** Our holder identity. */
  readonly identity: string;
  /** Shadow when not writable (`up --shadow`), else fenced. */
  readonly shadow: boolean;
  /** One read of the Lease (a GET). */
  readonly readLease: () => Promise<CoordinationLease | undefined>;
  readonly timings?: LeaderTimings;
  readonly cacheMs?: number;
  /** Wall clock (Lease times are real times). */
  readonly now?: () => number;
}

/** The write mode a Lease view gives `identity` at `now` (pure). */
export function writeModeOf(view: LeaseView, identity: string, shadow: boolean, now: number, timings: LeaderTimings = KUBEVIRT_LEADER_TIMINGS): WriteMode {
  const ours = view.holder === identity && !view.handingBack;
  const waited = view.writableAfter === undefined || now >= view.writableAfter;
  const renewed = view.renewedAt !== undefined && now < view.renewedAt + timings.renewDeadlineSeconds * 1000;
  if (ours && waited && renewed) return 'write';
  // Late, not lost: until the Lease lapses no candidate may take it, so the keys wait for our renewal.
  if (ours && waited && view.renewedAt !== undefined && now < view.renewedAt + view.durationMs) return 'overdue';
  return shadow ? 'shadow' : 'fenced';
}

/** See the module comment. */
export class CutoverGate {
  readonly identity: string;
  readonly shadow: boolean;
  readonly #opts: CutoverGateOptions;
  #view: LeaseView | undefined;
  #readAt = -Infinity;
  #inflight: Promise<LeaseView> | undefined;

  constructor(opts: CutoverGateOptions) {
    this.#opts = opts;
    this.identity = opts.identity;
    this.shadow = opts.shadow;
  }

  /** The Lease as last read (read now when older than the cache period). */
  async view(): Promise<LeaseView> {
    const now = (this.#opts.now ?? Date.now)();
    if (this.#view && now - this.#readAt < (this.#opts.cacheMs ?? DEFAULT_LEASE_CACHE_MS)) return this.#view;
    this.#inflight ??= (async () => {
      try {
        const v = viewOf(await this.#opts.readLease());
        this.#view = v;
        this.#readAt = (this.#opts.now ?? Date.now)();
        return v;
      } finally {
        this.#inflight = undefined;
      }
    })();
    return this.#inflight;
  }

  /** What this process may do now. A failed read of the Lease is thrown: the reconcile retries, having written nothing. */
  async mode(): Promise<WriteMode> {
    const view = await this.view();
    return writeModeOf(view, this.identity, this.shadow, (this.#opts.now ?? Date.now)(), this.#opts.timings);
  }

  /** Forget the cached read (after this process wrote the Lease itself). */
  invalidate(): void {
    this.#readAt = -Infinity;
  }
}

