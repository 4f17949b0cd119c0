/**
 * What one identity asked of the API server over a window, per VMI, as the API server counted
 * it (the emulator's request counters; on the real control plane, its audit log): every request,
 * reads, writes (events apart too), and each `verb resource`. The same figure for every system,
 * ours and KubeVirt's, since it is the server's view and not the system's own. Pure.
 */
import type { RequestCount } from '../../../sandbox/apiserver/counters.ts';

/** Per VMI (or per replica, per VMI moved), rounded to 3 places. */
export interface IdentityRequests {
  readonly identity: string;
  readonly requestsPerVmi: number;
  /** get, list, watch. */
  readonly readsPerVmi: number;
  /** create, update, patch, delete, deletecollection — events included. */
  readonly writesPerVmi: number;
  /** The writes of Events alone (core and events.k8s.io). */
  readonly eventWritesPerVmi: number;
  /** By `verb resource` (subresources as `pods/status`), largest first. */
  readonly byCall: Record<string, number>;
}

const READS = new Set(['get', 'list', 'watch']);
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** `identity`'s requests counted between `before` and `after`, divided by `n`. */
export function identityRequests(before: readonly RequestCount[], after: readonly RequestCount[], identity: string, n: number): IdentityRequests {
  const sum = (counts: readonly RequestCount[]) => {
    const out = new Map<string, number>();
    for (const c of counts) {
      if (c.identity !== identity) continue;
      const k = `${c.verb} ${c.resource}`;
      out.set(k, (out.get(k) ?? 0) + c.count);
    }
    return out;
  };
  const was = sum(before);
  const delta = [...sum(after)].map(([k, v]) => [k, v - (was.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
  const per = (x: number) => Math.round((x / Math.max(1, n)) * 1000) / 1000;
  let all = 0;
  let reads = 0;
  let writes = 0;
  let events = 0;
  for (const [k, v] of delta) {
    const [verb = '', resource = ''] = k.split(' ');
    all += v;
    if (READS.has(verb)) reads += v;
    if (WRITES.has(verb)) {
      writes += v;
      if (resource === 'events') events += v;
    }
  }
  return {
    identity,
    requestsPerVmi: per(all),
    readsPerVmi: per(reads),
    writesPerVmi: per(writes),
    eventWritesPerVmi: per(events),
    byCall: Object.fromEntries(delta.sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, per(v)])),
  };
}
