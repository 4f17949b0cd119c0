/**
 * Fault injection, all reversible: drop every open watch, answer the next N requests matching
 * {verb, resource, identity} with an error (410/429/500/409/…, exact Status bodies), add latency.
 */
import { ApiError, conflict, expired, internalError, tooManyRequests } from './errors.ts';

/** Which requests a fault applies to (all when empty). */
export interface FaultMatch {
  verb?: string;
  /** `pods`, `pods/status`, `virtualmachineinstances`… */
  resource?: string;
  identity?: string;
}

/** Status codes {@link Faults.failNext} knows how to spell. */
export type FaultCode = 409 | 410 | 429 | 500 | 503;

interface PendingFault extends FaultMatch {
  code: FaultCode;
  remaining: number;
}

/** The request attributes faults match on. */
export interface FaultTarget {
  verb: string;
  resource: string;
  identity: string;
  name?: string;
  group: string;
}

/** See the module comment. */
export class Faults {
  private pending: PendingFault[] = [];
  private latency: { ms: number; match: FaultMatch } | undefined;
  private readonly dropper: () => number;
  private readonly currentRv: () => number;

  constructor(dropWatches: () => number, currentRv: () => number) {
    this.dropper = dropWatches;
    this.currentRv = currentRv;
  }

  /** Ends every open watch cleanly now; returns how many were open. */
  dropWatches(): number {
    return this.dropper();
  }

  /** Answers the next `count` requests matching `match` with `code`. */
  failNext(code: FaultCode, count = 1, match: FaultMatch = {}): void {
    this.pending.push({ ...match, code, remaining: count });
  }

  /** Delays every matching request by `ms` real milliseconds (0 to stop). */
  setLatency(ms: number, match: FaultMatch = {}): void {
    this.latency = ms > 0 ? { ms, match } : undefined;
  }

  /** Removes every pending fault and the latency. */
  clear(): void {
    this.pending = [];
    this.latency = undefined;
  }

  /** Pending injected failures (for tests). */
  remaining(): number {
    return this.pending.reduce((n, f) => n + f.remaining, 0);
  }

  /** Latency to apply to a request (ms). */
  delayFor(t: FaultTarget): number {
    return this.latency && matches(this.latency.match, t) ? this.latency.ms : 0;
  }

  /** The injected error for this request, consuming one, if any. */
  take(t: FaultTarget): ApiError | undefined {
    const f = this.pending.find((p) => matches(p, t));
    if (!f) return undefined;
    if (--f.remaining <= 0) this.pending.splice(this.pending.indexOf(f), 1);
    const res = { group: t.group, resource: t.resource.split('/')[0]! };
    switch (f.code) {
      case 409:
        return conflict(res, t.name ?? '');
      case 410: {
        const rv = this.currentRv();
        return expired(rv - 1, rv);
      }
      case 429:
        return tooManyRequests(1);
      case 500:
        return internalError('injected fault');
      case 503:
        return new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', { retryAfterSeconds: 1 });
    }
  }
}

function matches(m: FaultMatch, t: FaultTarget): boolean {
  return (m.verb === undefined || m.verb === t.verb) && (m.resource === undefined || m.resource === t.resource) && (m.identity === undefined || m.identity === t.identity);
}
