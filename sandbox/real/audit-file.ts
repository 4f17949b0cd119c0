/**
 * The real API server's audit log (JSON lines, written by kube-apiserver itself) read as the
 * emulator's request counters and audit log: counters count every request per identity, verb
 * and resource; the audit view keeps the committed writes (2xx mutations) with the object after
 * the write where the policy logged it (see AUDIT_POLICY in control-plane.ts). The file is read
 * incrementally, on demand, so a count taken right after a call includes it (the server writes
 * audit events in blocking mode).
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import type { AuditEntry, AuditQuery } from '../apiserver/audit.ts';
import { RequestCounters } from '../apiserver/counters.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { Clock } from '../clock.ts';

/** The fields of an audit.k8s.io/v1 Event we read. */
interface AuditEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  /** Who the request acted as, when it impersonated. */
  impersonatedUser?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string; resourceVersion?: string };
  responseStatus?: { code?: number };
  responseObject?: KubeObject & { kind?: string };
  requestReceivedTimestamp?: string;
  requestURI?: string;
  stageTimestamp?: string;
}

/** One write request as the audit log has it. */
export interface WriteRequest {
  readonly identity: string;
  readonly verb: string;
  /** `pods`, `virtualmachineinstances/status`… */
  readonly resource: string;
  readonly code: number;
  /** Sent with `dryRun=All`. */
  readonly dryRun: boolean;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Follows one audit log file; see the module comment. */
export class AuditFile {
  readonly counters: RequestCounters;
  readonly #path: string;
  readonly #clock: Clock;
  readonly #identityOf: (user: string) => string;
  #offset = 0;
  #partial = '';
  #entries: AuditEntry[] = [];
  #writeRequests: WriteRequest[] = [];
  readonly #listeners = new Set<(e: AuditEntry) => void>();
  #poller: NodeJS.Timeout | undefined;
  /** Oldest entries are dropped beyond this many (as the emulator's AuditLog). */
  limit = 100_000;

  /** `identityOf` names a request's user as callers name identities (default: the user name). */
  constructor(path: string, clock: Clock, identityOf: (user: string) => string = (u) => u) {
    this.#path = path;
    this.#clock = clock;
    this.#identityOf = identityOf;
    const file = this;
    // Counters read the file first, so callers see every request made so far.
    this.counters = new (class extends RequestCounters {
      override snapshot() {
        file.sync();
        return super.snapshot();
      }
      override count(q = {}) {
        file.sync();
        return super.count(q);
      }
      override reset() {
        file.sync();
        super.reset();
      }
    })();
  }

  /** Reads what was appended since the last call. */
  sync(): void {
    if (!existsSync(this.#path)) return;
    const size = statSync(this.#path).size;
    if (size <= this.#offset) return;
    const fd = openSync(this.#path, 'r');
    try {
      const buf = Buffer.alloc(size - this.#offset);
      const n = readSync(fd, buf, 0, buf.length, this.#offset);
      this.#offset += n;
      const text = this.#partial + buf.subarray(0, n).toString('utf8');
      const lines = text.split('\n');
      this.#partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.#take(JSON.parse(line) as AuditEvent);
    } finally {
      closeSync(fd);
    }
  }

  #take(ev: AuditEvent): void {
    if (ev.stage !== 'ResponseComplete' && ev.stage !== 'Panic') return;
    const ref = ev.objectRef;
    const identity = this.#identityOf(ev.user?.username ?? '');
    const verb = ev.verb ?? '';
    if (!ref?.resource) return; // /healthz, /version, discovery…
    const resource = ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource;
    this.counters.record(identity, verb, ref.apiGroup ?? '', resource, ref.namespace ?? '');
    const code = ev.responseStatus?.code ?? 0;
    if (!WRITE_VERBS.has(verb)) return;
    // A dry run (shadow mode, docs/cutover.md) is a write request, never a committed write.
    const dryRun = /[?&]dryRun=All(&|$)/.test(ev.requestURI ?? '');
    this.#writeRequests.push({ identity, verb, resource, code, dryRun });
    if (this.#writeRequests.length > this.limit) this.#writeRequests.shift();
    if (dryRun || code < 200 || code >= 300) return;
    const obj = ev.responseObject && ev.responseObject.kind !== 'Status' ? ev.responseObject : undefined;
    const entry: AuditEntry = {
      time: this.#simulatedTime(ev.stageTimestamp),
      identity,
      verb,
      type: verb === 'create' ? 'ADDED' : verb === 'delete' || verb === 'deletecollection' ? 'DELETED' : 'MODIFIED',
      group: ref.apiGroup ?? '',
      resource: ref.resource,
      name: ref.name ?? obj?.metadata?.name ?? '',
      resourceVersion: obj?.metadata?.resourceVersion ?? '',
      object: obj ?? { metadata: { name: ref.name ?? '' } },
    };
    if (ref.subresource) entry.subresource = ref.subresource;
    if (ref.namespace) entry.namespace = ref.namespace;
    if (ev.impersonatedUser?.username) entry.impersonatedUser = ev.impersonatedUser.username;
    this.#entries.push(entry);
    if (this.#entries.length > this.limit) this.#entries.shift();
    for (const fn of this.#listeners) fn(entry);
  }

  /** The sandbox clock's time at a real timestamp (the clock may run faster than real time). */
  #simulatedTime(stamp: string | undefined): number {
    const real = stamp ? Date.parse(stamp) : Date.now();
    return this.#clock.nowMs() - (Date.now() - real) * this.#clock.speed;
  }

  /** Every write request `identity` made (answered or refused, dry runs included), oldest first. */
  writeRequests(identity: string): WriteRequest[] {
    this.sync();
    return this.#writeRequests.filter((w) => w.identity === identity);
  }

  /** Writes matching `q`, oldest first (as AuditLog.query). */
  query(q: AuditQuery = {}): AuditEntry[] {
    this.sync();
    return this.#entries.filter((e) => (Object.keys(q) as Array<keyof AuditQuery>).every((k) => q[k] === undefined || e[k] === q[k]));
  }

  /**
   * Calls `fn` for every new write (the file is polled every 50 ms while anyone listens). The
   * log is written before each response (blocking mode), so unsubscribing reads it once more:
   * every write answered before that is delivered, as the in-process emulator delivers it.
   */
  subscribe(fn: (e: AuditEntry) => void): () => void {
    this.#listeners.add(fn);
    this.#poller ??= setInterval(() => this.sync(), 50).unref();
    return () => {
      this.sync();
      this.#listeners.delete(fn);
      if (this.#listeners.size === 0 && this.#poller) {
        clearInterval(this.#poller);
        this.#poller = undefined;
      }
    };
  }

  clear(): void {
    this.sync();
    this.#entries = [];
  }

  close(): void {
    if (this.#poller) clearInterval(this.#poller);
    this.#poller = undefined;
  }
}
