/**
 * Request counters by identity (bearer token), verb, resource (+subresource) and namespace —
 * how the project measures "API calls per VMI" and separates the controllers' calls from the
 * simulated node side's.
 */

/** One counted request class. */
export interface RequestCount {
  identity: string;
  verb: string;
  /** `pods`, `pods/status`, `virtualmachineinstances`… (no group). */
  resource: string;
  group: string;
  namespace: string;
  count: number;
}

/** Filter for {@link RequestCounters.count}; `resource` matches `pods` or `pods/status` exactly. */
export interface CountQuery {
  identity?: string;
  verb?: string | string[];
  resource?: string;
  group?: string;
  namespace?: string;
}

/** See the module comment. */
export class RequestCounters {
  private readonly counts = new Map<string, RequestCount>();

  /** Counts one request. */
  record(identity: string, verb: string, group: string, resource: string, namespace: string): void {
    const key = JSON.stringify([identity, verb, group, resource, namespace]);
    const c = this.counts.get(key);
    if (c) c.count++;
    else this.counts.set(key, { identity, verb, group, resource, namespace, count: 1 });
  }

  /** Every non-zero counter (copies). */
  snapshot(): RequestCount[] {
    return [...this.counts.values()].map((c) => ({ ...c }));
  }

  /** Sum of the counters matching `q`. */
  count(q: CountQuery = {}): number {
    const verbs = q.verb === undefined ? undefined : Array.isArray(q.verb) ? q.verb : [q.verb];
    let n = 0;
    for (const c of this.counts.values()) {
      if (q.identity !== undefined && c.identity !== q.identity) continue;
      if (verbs && !verbs.includes(c.verb)) continue;
      if (q.resource !== undefined && c.resource !== q.resource) continue;
      if (q.group !== undefined && c.group !== q.group) continue;
      if (q.namespace !== undefined && c.namespace !== q.namespace) continue;
      n += c.count;
    }
    return n;
  }

  /** Zeroes everything. */
  reset(): void {
    this.counts.clear();
  }
}
