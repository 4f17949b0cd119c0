/**
 * Shadow mode's judge (docs/cutover.md): every dry-run write a reconcile makes becomes a
 * {@link Decision}; the relay's watch feeds the recorder every version of the objects it sees; a
 * decision `windowMs` old is judged. It agrees when, at some instant within `windowMs` either side
 * of it, the live object showed what the decision would have written (the live controller decided
 * the same, a little earlier or later); otherwise it is a {@link Divergence}, stored with the
 * fields that differ from the object as last seen. An object the watch did not show in that span
 * (unchanged, or of a kind the relay does not watch) is read once, at judgement time.
 */
import type { KubeClient } from '../kube/client.ts';
import type { ShadowWrite } from '../kube/guarded-writes.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import { decisionOf, describeTarget, diffDecision, type Decision, type FieldDiff, type Target } from './decision.ts';

/** A decision the live controller's result does not show. */
export interface Divergence {
  /** Epoch ms of the decision. */
  readonly at: number;
  readonly controller: string;
  /** The controller's key (`default/vmi-a`). */
  readonly key: string;
  /** `create pods`, `patch virtualmachineinstances/status`… */
  readonly write: string;
  /** `Pod default/virt-launcher-vmi-a-*`, `VirtualMachineInstance default/vmi-a`. */
  readonly object: string;
  readonly fields: readonly FieldDiff[];
}

/** Where divergences go (a table; the CLI and the dashboard read it back). */
export interface DivergenceSink {
  add(d: Divergence): void | Promise<void>;
}

export interface ShadowRecorderOptions {
  readonly sink: DivergenceSink;
  /** Reads the target's live objects now: `[obj]` or `[]` by name, the matching objects for a generateName. */
  readonly read: (t: Target) => Promise<unknown[]>;
  readonly metrics?: MetricsRegistry;
  /** How far apart our decision and the live controller's may be. Default 10 s. */
  readonly windowMs?: number;
  /**
   * How long after our decision a live controller running late (a loaded API server, a long
   * queue) may still show it: a decision that does not agree at `windowMs` is looked at again
   * until then, and only then is it a divergence. Default 6 × `windowMs`.
   */
  readonly lateMs?: number;
  /** Wall clock. */
  readonly now?: () => number;
  /** A divergence the sink refused (it is judged again at the next pass). */
  readonly onSinkError?: (err: unknown) => void;
}

interface Pending {
  readonly at: number;
  readonly controller: string;
  readonly key: string;
  readonly decision: Decision;
  /** A later reconcile of the key left the object as it was ({@link ShadowRecorder.settled}). */
  settled?: boolean;
}

interface Seen {
  readonly at: number;
  /** Undefined: deleted. */
  readonly obj: unknown;
}

const DEFAULT_WINDOW_MS = 10_000;

/** See the module comment. */
export class ShadowRecorder {
  readonly windowMs: number;
  readonly lateMs: number;
  readonly #opts: ShadowRecorderOptions;
  readonly #pending: Pending[] = [];
  readonly #history = new Map<string, Seen[]>();
  readonly #names = new Map<string, Set<string>>();
  #timer: NodeJS.Timeout | undefined;
  #judging: Promise<void> | undefined;
  /** Decisions recorded, agreed, diverged, and superseded by a later one of ours. */
  readonly counts = { decisions: 0, agreed: 0, diverged: 0, superseded: 0 };

  constructor(opts: ShadowRecorderOptions) {
    this.#opts = opts;
    this.windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    this.lateMs = Math.max(this.windowMs, opts.lateMs ?? 6 * this.windowMs);
  }

  #now(): number {
    return (this.#opts.now ?? Date.now)();
  }

  /** One dry-run write of `controller`'s reconcile of `key`. */
  record(controller: string, key: string, w: ShadowWrite): void {
    const decision = decisionOf(w);
    this.#opts.metrics?.inc('shadow_writes_total', 'Dry-run writes made in shadow mode', { controller });
    if (decision) this.recordDecision(controller, key, decision, this.#now());
  }

  /**
   * One decision, made at `at` (epoch ms): {@link record}'s, or one a function made elsewhere and
   * sent over the shadow queue (shadow-channel.ts).
   */
  recordDecision(controller: string, key: string, decision: Decision, at: number): void {
    this.counts.decisions++;
    // An earlier decision of ours on the same object and field set, not judged yet, is an
    // intermediate step (a status computed from a VMI seen at another instant than the live
    // controller saw it): the later one stands for both.
    const same = (p: Pending) => p.controller === controller && p.key === key && p.decision.write === decision.write && decision.target.name !== undefined && p.decision.target.name === decision.target.name && p.decision.target.kind === decision.target.kind && sameFields(p.decision, decision);
    for (let i = this.#pending.length - 1; i >= 0; i--) {
      if (same(this.#pending[i]!)) {
        this.#pending.splice(i, 1);
        this.counts.superseded++;
        this.#opts.metrics?.inc('shadow_decisions_total', 'Shadow decisions judged, by verdict', { controller, verdict: 'superseded' });
      }
    }
    this.#pending.push({ at, controller, key, decision });
  }

  /**
   * A shadow reconcile of `key` that began at `startedAt` ran to its end without meeting a race
   * (no Conflict, no AlreadyExists) and without waiting on its expectations. Having read the
   * objects as the live controller has left them by now, it wrote what it would change; an update
   * or patch of ours still pending from an earlier reconcile of the key that it did not repeat is
   * an intermediate step — decided from another instant's inputs (one of two VMIs ready, a target
   * pod not yet running) that the live controller never looked at, and our controller now leaves
   * the object as the live one made it. Such a decision is still judged at its window — agreeing
   * if the live object showed it — but one the live object never showed is superseded by that
   * later (empty) decision, as by a later written one, instead of waiting for a late live
   * controller. Creates and deletes are never settled so: a pod the live controller created is
   * there whatever pod we would have made.
   */
  settled(controller: string, key: string, startedAt: number): void {
    for (const p of this.#pending) {
      if (p.controller === controller && p.key === key && p.at < startedAt && isObjectUpdate(p.decision)) p.settled = true;
    }
  }

  /** One watch event's object (the relay's). */
  observe(kind: string, type: string, obj: { metadata?: { name?: string; namespace?: string } }): void {
    const name = obj.metadata?.name;
    if (!name) return;
    const ns = obj.metadata?.namespace ?? '';
    const id = `${kind}/${ns}/${name}`;
    const list = this.#history.get(id) ?? [];
    list.push({ at: this.#now(), obj: type === 'DELETED' ? undefined : obj });
    this.#history.set(id, list);
    const dir = `${kind}/${ns}`;
    let names = this.#names.get(dir);
    if (!names) this.#names.set(dir, (names = new Set()));
    names.add(name);
  }

  /** Decisions not judged yet. */
  get pending(): number {
    return this.#pending.length;
  }

  start(everyMs = 1000): void {
    this.#timer ??= setInterval(() => void this.judge(), everyMs);
    this.#timer.unref();
  }

  /** Stops the timer and judges what is left now (`all`: even decisions younger than the window). */
  async stop(all = false): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.judge(all);
  }

  /** Judges every decision older than the window (`all`: every decision, finally: no more waiting for a late live controller). */
  judge(all = false): Promise<void> {
    const run = async (): Promise<void> => {
      const now = this.#now();
      const due = this.#pending.filter((p) => all || p.at + this.windowMs <= now);
      for (const p of due) this.#pending.splice(this.#pending.indexOf(p), 1);
      for (const p of due) await this.#judgeOne(p, all);
      this.#prune(now);
    };
    const next = (this.#judging ?? Promise.resolve()).then(run, run);
    this.#judging = next;
    return next;
  }

  async #judgeOne(p: Pending, final: boolean): Promise<void> {
    const { target, expectation } = p.decision;
    const now = this.#now();
    const from = p.at - this.windowMs;
    const to = Math.min(Math.max(p.at + this.windowMs, now), p.at + this.lateMs);
    const ids = this.#candidates(target);
    const seen = ids.flatMap((id) => spanOf(this.#history.get(id) ?? [], from, to));
    let best: FieldDiff[] | undefined;
    const consider = (obj: unknown): boolean => {
      const d = diffDecision(expectation, obj);
      if (!best || d.length < best.length) best = d;
      return d.length === 0;
    };
    // A decision about an object that does not exist yet (a generateName create) is judged on
    // the objects of that name prefix; a delete agrees with any deletion seen.
    let agreed = seen.some(consider);
    if (!agreed) {
      let live: unknown[];
      try {
        live = await this.#opts.read(target);
      } catch {
        // An unanswered read is no evidence either way: judge it again at the next pass.
        this.#pending.push(p);
        return;
      }
      agreed = live.length === 0 ? consider(undefined) : live.some(consider);
    }
    if (!agreed && p.settled) {
      this.counts.superseded++;
      this.#opts.metrics?.inc('shadow_decisions_total', 'Shadow decisions judged, by verdict', { controller: p.controller, verdict: 'superseded' });
      return;
    }
    if (!agreed && !final && now < p.at + this.lateMs) {
      // Not shown yet: the live controller may be running late. Look again at the next pass.
      this.#pending.push(p);
      return;
    }
    const labels = { controller: p.controller };
    if (agreed) {
      this.counts.agreed++;
      this.#opts.metrics?.inc('shadow_decisions_total', 'Shadow decisions judged, by verdict', { ...labels, verdict: 'agreed' });
      return;
    }
    const object = describeTarget(target);
    try {
      await this.#opts.sink.add({ at: p.at, controller: p.controller, key: p.key, write: p.decision.write, object, fields: best ?? [] });
    } catch (err) {
      // The table did not take it (a throttled DynamoDB): judged again, and written, at the next pass.
      this.#pending.push(p);
      this.#opts.onSinkError?.(err);
      return;
    }
    this.counts.diverged++;
    this.#opts.metrics?.inc('shadow_decisions_total', 'Shadow decisions judged, by verdict', { ...labels, verdict: 'diverged' });
    this.#opts.metrics?.inc('shadow_divergences_total', 'Shadow decisions the live controller did not make', labels);
  }

  #candidates(t: Target): string[] {
    const dir = `${t.kind}/${t.namespace ?? ''}`;
    if (t.name) return [`${dir}/${t.name}`];
    const prefix = t.generateName ?? '';
    return [...(this.#names.get(dir) ?? [])].filter((n) => n.startsWith(prefix)).map((n) => `${dir}/${n}`);
  }

  #prune(now: number): void {
    const keepFrom = Math.min(now, ...this.#pending.map((p) => p.at)) - this.windowMs;
    for (const [id, list] of this.#history) {
      // The last version before the span stays: it is what the object looked like during it.
      const firstKept = list.findIndex((s) => s.at >= keepFrom);
      if (firstKept === -1) this.#history.set(id, list.slice(-1));
      else if (firstKept > 1) this.#history.set(id, list.slice(firstKept - 1));
    }
  }
}

/** The versions seen from `from` to `to`, and the one before `from` (the object as it was then). */
function spanOf(list: readonly Seen[], from: number, to: number): unknown[] {
  const before = list.filter((s) => s.at < from).at(-1);
  return [...(before ? [before] : []), ...list.filter((s) => s.at >= from && s.at <= to)].map((s) => s.obj);
}

/** An update or patch of a named object (not a create, a delete or an eviction). */
function isObjectUpdate(d: Decision): boolean {
  const verb = d.write.split(' ')[0];
  return d.expectation.kind === 'fields' && d.target.name !== undefined && (verb === 'update' || verb === 'patch');
}

/** The same top-level parts written (a status patch and a metadata patch of one object are different decisions). */
function sameFields(a: Decision, b: Decision): boolean {
  const keys = (d: Decision) => (d.expectation.kind === 'gone' ? 'gone' : Object.keys(d.expectation.expect).sort().join(','));
  return keys(a) === keys(b);
}

/** The recorder's `read`: a target's live object by name, or the objects of its generateName prefix. */
export async function readTarget(kube: KubeClient, t: Target): Promise<unknown[]> {
  if (t.name) {
    const obj = await kube.get(t.resource, t.resource.namespaced ? t.namespace : undefined, t.name);
    return obj === undefined ? [] : [obj];
  }
  const list = await kube.list(t.resource, t.resource.namespaced ? t.namespace : undefined);
  return list.items.filter((o) => ((o as { metadata?: { name?: string } }).metadata?.name ?? '').startsWith(t.generateName ?? ''));
}
