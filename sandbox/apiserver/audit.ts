/**
 * The audit log: every committed mutation (requests and the emulator's own controllers), with
 * the clock's time, verb, resource, namespace/name, resourceVersion and a copy of the object
 * after the write. Queryable and subscribable, e.g. to check "never more than 5 migrations
 * running at any instant" from the sequence of writes.
 */
import { EXPIRY } from './event-ttl.ts';
import type { Clock } from '../clock.ts';
import type { Store, StoreEvent } from './store.ts';
import type { KubeObject } from './types.ts';

/** One audited write. */
export interface AuditEntry {
  /** Simulated epoch ms (the sandbox clock). */
  time: number;
  /** Who authenticated (the request's bearer token), as kube-apiserver's audit `user`. */
  identity: string;
  /** The user the request acted as, when it impersonated one (audit `impersonatedUser`). */
  impersonatedUser?: string;
  /** create, update, patch, delete, deletecollection. */
  verb: string;
  /** Store event: ADDED, MODIFIED, DELETED. */
  type: StoreEvent['type'];
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name: string;
  resourceVersion: string;
  /** The object after the write (for DELETED: its last state): the stored object itself, read-only. */
  object: KubeObject;
}

/** Filter for {@link AuditLog.query}. */
export interface AuditQuery {
  resource?: string;
  group?: string;
  verb?: string;
  identity?: string;
  namespace?: string;
  name?: string;
  type?: StoreEvent['type'];
}

/** See the module comment. */
export class AuditLog {
  private entries: AuditEntry[] = [];
  private readonly listeners = new Set<(e: AuditEntry) => void>();
  /** Oldest entries are dropped beyond this many. */
  limit: number;

  constructor(store: Store, clock: Clock, limit = 100_000) {
    this.limit = limit;
    store.subscribe((e) => {
      // An Event's lease running out in etcd is no request (event-ttl.ts): kube-apiserver audits nothing.
      if (e.ctx.verb === EXPIRY.verb) return;
      const md = e.object.metadata;
      const entry: AuditEntry = {
        time: clock.nowMs(),
        identity: e.ctx.identity,
        verb: e.ctx.verb,
        type: e.type,
        group: e.res.group,
        resource: e.res.resource,
        name: md.name!,
        resourceVersion: String(e.rv),
        // The stored object itself: the store never mutates what it holds (store.ts), and a copy
        // of every write was a tenth of the emulator's time at 1,000 VMIs.
        object: e.object,
      };
      if (e.ctx.subresource) entry.subresource = e.ctx.subresource;
      if (e.ctx.impersonatedUser) entry.impersonatedUser = e.ctx.impersonatedUser;
      if (md.namespace) entry.namespace = md.namespace;
      this.entries.push(entry);
      if (this.entries.length > this.limit) this.entries.shift();
      for (const fn of this.listeners) fn(entry);
    });
  }

  /** Entries matching `q`, oldest first. */
  query(q: AuditQuery = {}): AuditEntry[] {
    return this.entries.filter((e) => (Object.keys(q) as Array<keyof AuditQuery>).every((k) => q[k] === undefined || e[k] === q[k]));
  }

  /** Calls `fn` for every new entry; returns the unsubscribe function. */
  subscribe(fn: (e: AuditEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  clear(): void {
    this.entries = [];
  }
}
