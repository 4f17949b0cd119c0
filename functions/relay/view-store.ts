/**
 * The relay's whole copies of the objects some controller's messages carry (shared/relay/view.ts):
 * for each viewed resource, every object its watch delivered, without `managedFields` (no reconcile
 * reads them, and they are a large part of an object), indexed by namespace and by label.
 * Objects of resources no view needs stay as the reflector's small stubs.
 *
 * A LIST is answered only when the answer is exact: the selector is a simple one and asks at least
 * what the relay's watch of that resource asks (a relay watching pods labelled `kubevirt.io`
 * cannot tell which other pods match `app=x`).
 */
import { randomUUID } from 'node:crypto';
import { resourceName, type Resource } from '../../shared/api/resources.ts';
import { meetsRequirements, parseSimpleSelector, viewObjectId, viewResourceName, type LabelRequirement, type ViewAnswer, type ViewRead, type ViewSource, type ViewStamp } from '../../shared/relay/view.ts';
import type { EventType, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';

interface Held {
  readonly resource: Resource<unknown>;
  /** What the relay's watch of the resource selects (its requirements; [] for every object). */
  readonly watched: readonly LabelRequirement[] | undefined;
  /** namespace → name → object. */
  readonly byNamespace: Map<string, Map<string, WatchedObject>>;
  /** `key=value` → ids (`namespace/name`) of the objects carrying that label. */
  readonly byLabel: Map<string, Set<string>>;
  /** How far its watch has come (a resourceVersion), undefined before the first list and during a relist. */
  progress: bigint | undefined;
  /** Since when (epoch ms) its watch stream has been open; undefined while none is. */
  watchingSince: number | undefined;
}

/**
 * How long a watch stream must have been open before the store counts its copy as current: the
 * time an API server takes to send what happened since the version the watch started from.
 */
export const VIEW_SETTLE_MS = 1000;

export class ViewStore implements ViewSource {
  readonly #byKind = new Map<WatchedKind, Held>();
  readonly #byName = new Map<string, Held>();
  /** This store's identity in the stamps of the views it answers (one per relay process). */
  readonly #id = randomUUID();
  /** Watch events applied so far: a view's place in this store's history. */
  #applied = 0;

  /** `resources`: each viewed resource and the label selector its watch uses. */
  constructor(resources: readonly { readonly resource: Resource<unknown>; readonly watchSelector?: string | undefined }[]) {
    for (const { resource, watchSelector } of resources) {
      const held: Held = { resource, watched: parseSimpleSelector(watchSelector), byNamespace: new Map(), byLabel: new Map(), progress: undefined, watchingSince: undefined };
      this.#byKind.set(resource.kind, held);
      this.#byName.set(resourceName(resource), held);
    }
  }

  /** Keeps (or forgets) `obj` when its kind is viewed. */
  apply(kind: WatchedKind, type: EventType, obj: WatchedObject): void {
    const held = this.#byKind.get(kind);
    if (!held) return;
    this.#applied++;
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    const id = `${ns}/${name}`;
    let names = held.byNamespace.get(ns);
    const before = names?.get(name);
    if (before) for (const l of labelTerms(before)) held.byLabel.get(l)?.delete(id);
    if (type === 'DELETED') {
      names?.delete(name);
      if (names?.size === 0) held.byNamespace.delete(ns);
      return;
    }
    if (!names) held.byNamespace.set(ns, (names = new Map()));
    const kept = withoutManagedFields(obj);
    names.set(name, kept);
    for (const l of labelTerms(kept)) {
      let ids = held.byLabel.get(l);
      if (!ids) held.byLabel.set(l, (ids = new Set()));
      ids.add(id);
    }
  }

  /** Records how far the watch of `kind` has come, and whether a stream is open (the reflector's `onProgress`). */
  progress(kind: WatchedKind, resourceVersion: string | undefined, watching: boolean, now: number = Date.now()): void {
    const held = this.#byKind.get(kind);
    if (!held) return;
    held.progress = resourceVersion === undefined ? undefined : versionOf(resourceVersion);
    if (!watching) held.watchingSince = undefined;
    else held.watchingSince ??= now;
  }

  /**
   * Whether `answers` may go out together: each answered resource's copy is at least as new as the
   * newest object among them. A controller writes an object after reading others (the VMI is
   * Scheduled after its pod was seen bound), so an object's version is later than what its last
   * write was decided on; a view whose pods lag the VMI's version could show the VMI Scheduled
   * beside a pod not yet bound — a cluster that never was.
   *
   * A copy is that new when its watch has delivered an event (or bookmark, or list) at least at
   * that version, or when its stream has been open `settleMs` without a break: a quiet watch sees
   * no events, yet is current (the API server sends a new stream what it missed at once). A watch
   * that broke is behind from the break until its new stream settles. Versions are compared as
   * numbers, as the API server's (etcd revisions) and the emulator's are; a version that is not a
   * decimal integer makes the view not go out.
   */
  consistent(answers: readonly ViewAnswer[], now: number = Date.now(), settleMs: number = VIEW_SETTLE_MS): boolean {
    let newest = 0n;
    for (const a of answers) {
      for (const o of a.items) {
        const v = versionOf((o as WatchedObject).metadata?.resourceVersion ?? '');
        if (v === undefined) return false;
        if (v > newest) newest = v;
      }
    }
    return answers.every((a) => {
      const held = this.#byName.get(a.resource);
      if (!held || held.progress === undefined) return false;
      return held.progress >= newest || (held.watchingSince !== undefined && now - held.watchingSince >= settleMs);
    });
  }

  /** Where the store is in its history, for the view taken now (shared/relay/view.ts `fresherView`). */
  stamp(): ViewStamp {
    return { relay: this.#id, seq: this.#applied };
  }

  get(resource: Resource<unknown>, namespace: string, name: string): WatchedObject | undefined {
    return this.#byName.get(resourceName(resource))?.byNamespace.get(namespace)?.get(name);
  }

  /** The answer to `read`, or undefined when the store cannot answer it exactly. */
  answer(read: ViewRead): ViewAnswer | undefined {
    const held = this.#byName.get(resourceName(read.resource));
    if (!held) return undefined;
    const base = { resource: viewResourceName(read.resource), namespace: read.namespace };
    if (read.name !== undefined) {
      const obj = held.byNamespace.get(read.namespace)?.get(read.name);
      return { ...base, name: read.name, items: obj ? [obj] : [] };
    }
    const reqs = parseSimpleSelector(read.labelSelector);
    if (!reqs || !held.watched || !held.watched.every((w) => reqs.some((r) => r.key === w.key && (w.value === undefined || r.value === w.value)))) return undefined;
    const names = held.byNamespace.get(read.namespace);
    // The most selective equality requirement picks the candidates; the rest filter them.
    const eq = reqs.filter((r) => r.value !== undefined).map((r) => held.byLabel.get(`${r.key}=${r.value}`)?.size ?? 0);
    const pick = reqs.find((r) => r.value !== undefined && (held.byLabel.get(`${r.key}=${r.value}`)?.size ?? 0) === Math.min(...eq));
    const candidates = pick
      ? [...(held.byLabel.get(`${pick.key}=${pick.value}`) ?? [])].filter((id) => id.startsWith(`${read.namespace}/`)).map((id) => names?.get(id.slice(read.namespace.length + 1)))
      : [...(names?.values() ?? [])];
    const items = candidates.filter((o): o is WatchedObject => o !== undefined && meetsRequirements(reqs, o.metadata?.labels));
    const w = read.trustEmptyWith;
    return { ...base, ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}), items, ...(w ? { trustEmptyWith: viewObjectId(viewResourceName(w.resource), w.namespace, w.name) } : {}) };
  }

  /** Objects held, over all viewed resources. */
  get size(): number {
    let n = 0;
    for (const h of this.#byKind.values()) for (const names of h.byNamespace.values()) n += names.size;
    return n;
  }
}

/** A resourceVersion as a number, or undefined when it is not a decimal integer. */
function versionOf(rv: string): bigint | undefined {
  return /^[0-9]{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

function labelTerms(obj: WatchedObject): string[] {
  return Object.entries(obj.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v}`);
}

function withoutManagedFields(obj: WatchedObject): WatchedObject {
  const meta = obj.metadata as (WatchedObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (!meta?.managedFields) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest };
}
