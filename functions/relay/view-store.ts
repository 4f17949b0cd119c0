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
import { resourceName, type Resource } from '../../shared/api/resources.ts';
import { meetsRequirements, parseSimpleSelector, viewResourceName, type LabelRequirement, type ViewAnswer, type ViewRead, type ViewSource } from '../../shared/relay/view.ts';
import type { EventType, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';

interface Held {
  readonly resource: Resource<unknown>;
  /** What the relay's watch of the resource selects (its requirements; [] for every object). */
  readonly watched: readonly LabelRequirement[] | undefined;
  /** namespace → name → object. */
  readonly byNamespace: Map<string, Map<string, WatchedObject>>;
  /** `key=value` → ids (`namespace/name`) of the objects carrying that label. */
  readonly byLabel: Map<string, Set<string>>;
}

export class ViewStore implements ViewSource {
  readonly #byKind = new Map<WatchedKind, Held>();
  readonly #byName = new Map<string, Held>();

  /** `resources`: each viewed resource and the label selector its watch uses. */
  constructor(resources: readonly { readonly resource: Resource<unknown>; readonly watchSelector?: string | undefined }[]) {
    for (const { resource, watchSelector } of resources) {
      const held: Held = { resource, watched: parseSimpleSelector(watchSelector), byNamespace: new Map(), byLabel: new Map() };
      this.#byKind.set(resource.kind, held);
      this.#byName.set(resourceName(resource), held);
    }
  }

  /** Keeps (or forgets) `obj` when its kind is viewed. */
  apply(kind: WatchedKind, type: EventType, obj: WatchedObject): void {
    const held = this.#byKind.get(kind);
    if (!held) return;
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
    return { ...base, ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}), items, ...(read.trustEmpty ? { trustEmpty: true } : {}) };
  }

  /** Objects held, over all viewed resources. */
  get size(): number {
    let n = 0;
    for (const h of this.#byKind.values()) for (const names of h.byNamespace.values()) n += names.size;
    return n;
  }
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
