/**
 * Events expire, as kube-apiserver's do (`--event-ttl`, default one hour): every write of an Event
 * gives it a lease of that long in etcd, and when the lease runs out etcd drops the key — watchers
 * see it DELETED, and no request did it, so the audit log has no entry. Without this the emulator
 * kept every Event for ever: in an hour's soak, where the emulator shares the process with what
 * is measured, its Events were most of the heap's growth (docs/reliability.md, "The soak").
 */
import type { Clock, ClockTimer } from '../clock.ts';
import type { Store, StoreEvent } from './store.ts';
import type { ResourceInfo } from './resources.ts';

/** kube-apiserver's default `--event-ttl`. */
export const DEFAULT_EVENT_TTL_MS = 60 * 60_000;

/** The write context of an expiry: not a request (the audit log skips it). */
export const EXPIRY = { identity: 'system:etcd-lease', verb: 'expire' } as const;

/** Starts expiring Events `ttlMs` after their last write; returns the stopper. */
export function startEventTtl(store: Store, clock: Clock, ttlMs: number): () => void {
  // Every Event has the same TTL, so Map order (re-inserted on each write) is expiry order.
  const leases = new Map<string, { res: ResourceInfo; namespace: string | undefined; name: string; expiresAt: number }>();
  const unsubscribe = store.subscribe((e: StoreEvent) => {
    if (e.res.resource !== 'events') return;
    const md = e.object.metadata;
    const key = `${e.res.group}/${md.namespace ?? ''}/${md.name}`;
    leases.delete(key);
    if (e.type !== 'DELETED') leases.set(key, { res: e.res, namespace: md.namespace, name: md.name!, expiresAt: clock.nowMs() + ttlMs });
  });
  let timer: ClockTimer | undefined;
  let stopped = false;
  const sweep = (): void => {
    const now = clock.nowMs();
    for (const [key, lease] of leases) {
      if (lease.expiresAt > now) break;
      leases.delete(key);
      store.remove(lease.res, lease.namespace, lease.name, { ...EXPIRY });
    }
    if (!stopped) timer = clock.setTimeout(sweep, Math.min(ttlMs, 30_000));
  };
  timer = clock.setTimeout(sweep, Math.min(ttlMs, 30_000));
  return () => {
    stopped = true;
    unsubscribe();
    clock.clearTimeout(timer);
  };
}
