/**
 * Objects seen through their schema the way structured-merge-diff sees them, for managed fields
 * and server-side apply: which paths a value sets (`toFieldSet`), what changed between two values
 * (`compareFields`), the apply merge of a configuration into a live object (`mergeFields`), and
 * removal of a path (`removePath`).
 *
 * Types come from the OpenAPI schemas the emulator already serves. Lists are atomic unless the
 * schema says otherwise: `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`, `set`,
 * or — for built-in kinds published without a list type — `x-kubernetes-patch-strategy: merge`
 * with the `x-kubernetes-patch-merge-key` (no key: a set), as upstream's schema conversion does.
 * Maps (`additionalProperties`) are granular unless `x-kubernetes-map-type: atomic`; a struct
 * marked atomic is one leaf. Values without a schema (preserve-unknown-fields subtrees,
 * free-form built-ins) are "deduced": objects granular, lists atomic.
 */
import { FieldSet } from './field-set.ts';
import type { Schema, SchemaIndex } from './openapi/schemas.ts';
import { clone, isObject, jsonEqual } from './types.ts';

type Shape =
  | { kind: 'leaf' }
  | { kind: 'struct'; props: Record<string, Schema>; rest: Schema | 'deduced' | undefined; embedded: boolean }
  | { kind: 'map'; elem: Schema | undefined }
  | { kind: 'list'; set: boolean; keys: string[]; item: Schema | undefined };

const OBJECT_META: Schema = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' };
const STRING: Schema = { type: 'string' };

/** The schema knowledge the walks need. */
export class Typed {
  private readonly schemas: SchemaIndex;
  constructor(schemas: SchemaIndex) {
    this.schemas = schemas;
  }

  private shape(schema: Schema | undefined, value: unknown): Shape {
    const s = schema ? this.schemas.resolve(schema) : undefined;
    if (!s) return isObject(value) ? { kind: 'map', elem: undefined } : { kind: 'leaf' };
    if (s['x-kubernetes-int-or-string']) return { kind: 'leaf' };
    if (Array.isArray(value) || s.type === 'array' || s.items) {
      const lt = s['x-kubernetes-list-type'];
      if (lt === 'map') return { kind: 'list', set: false, keys: s['x-kubernetes-list-map-keys'] ?? [], item: s.items };
      if (lt === 'set') return { kind: 'list', set: true, keys: [], item: s.items };
      if (lt === undefined && /^merge/.test(String(s['x-kubernetes-patch-strategy'] ?? ''))) {
        const key = s['x-kubernetes-patch-merge-key'];
        return key ? { kind: 'list', set: false, keys: [key], item: s.items } : { kind: 'list', set: true, keys: [], item: s.items };
      }
      return { kind: 'leaf' };
    }
    if (s['x-kubernetes-map-type'] === 'atomic') return { kind: 'leaf' };
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (s.properties || embedded) {
      const addl = s.additionalProperties;
      const rest = isObject(addl) ? (addl as Schema) : addl === true || s['x-kubernetes-preserve-unknown-fields'] ? 'deduced' : undefined;
      return { kind: 'struct', props: s.properties ?? {}, rest, embedded };
    }
    if (isObject(s.additionalProperties)) return { kind: 'map', elem: s.additionalProperties as Schema };
    if (s.type === 'object' || isObject(value)) return { kind: 'map', elem: undefined };
    return { kind: 'leaf' };
  }

  /** A struct field's or map entry's schema, and whether it is a declared field. */
  private child(sh: Shape, key: string): { schema: Schema | undefined; declared: boolean } {
    if (sh.kind === 'struct') {
      const p = sh.props[key];
      if (p) return { schema: p, declared: true };
      if (sh.embedded && (key === 'apiVersion' || key === 'kind')) return { schema: STRING, declared: true };
      if (sh.embedded && key === 'metadata') return { schema: OBJECT_META, declared: true };
      return { schema: sh.rest === 'deduced' ? undefined : sh.rest, declared: false };
    }
    if (sh.kind === 'map') return { schema: sh.elem, declared: false };
    return { schema: undefined, declared: false };
  }

  /** The FieldsV1 element of a list item: `k:{…}` by the map keys (sorted), `v:…` for a set. */
  private element(sh: Extract<Shape, { kind: 'list' }>, item: unknown, index: number): string {
    if (sh.set) return `v:${JSON.stringify(item)}`;
    if (!isObject(item) || sh.keys.length === 0) return `i:${index}`;
    const itemSchema = sh.item ? this.schemas.resolve(sh.item) : undefined;
    const key: Record<string, unknown> = {};
    for (const k of [...sh.keys].sort()) {
      // A key the item omits takes its schema default (ports: protocol TCP), as upstream does.
      const v = item[k] ?? (itemSchema?.properties?.[k] as Schema | undefined)?.default;
      if (v !== undefined) key[k] = v;
    }
    return `k:${JSON.stringify(key)}`;
  }

  private index(sh: Extract<Shape, { kind: 'list' }>, list: unknown): Map<string, unknown> {
    const out = new Map<string, unknown>();
    if (Array.isArray(list)) list.forEach((item, i) => out.set(this.element(sh, item, i), item));
    return out;
  }

  /**
   * An empty object of a built-in kind as Go encodes one: struct fields are never omitted
   * (`metadata`, `spec`, and the required ones — a required list is `null`), so a create does
   * not "add" them.
   */
  emptyBuiltin(schema: Schema | undefined, depth = 0): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const s = schema ? this.schemas.resolve(schema) : undefined;
    if (!s?.properties || depth > 6) return out;
    const required = new Set(s.required ?? []);
    for (const [k, p] of Object.entries(s.properties)) {
      if (!required.has(k) && k !== 'metadata' && k !== 'spec' && !(k === 'status' && depth === 0)) continue;
      const ps = this.schemas.resolve(p);
      if (!ps) continue;
      if (ps.type === 'array') {
        if (required.has(k)) out[k] = null;
      } else if (ps.properties && ps['x-kubernetes-map-type'] !== 'atomic') out[k] = this.emptyBuiltin(p, depth + 1);
    }
    return out;
  }

  /** The paths `value` sets (upstream's ToFieldSet). */
  toFieldSet(schema: Schema | undefined, value: unknown): FieldSet {
    const root = new FieldSet();
    this.collect(root, schema, value);
    root.member = false;
    return root;
  }

  private collect(node: FieldSet, schema: Schema | undefined, value: unknown): void {
    const sh = this.shape(schema, value);
    if (value === null || sh.kind === 'leaf') {
      node.member = true;
      return;
    }
    if (sh.kind === 'list') {
      if (!Array.isArray(value)) return void (node.member = true);
      value.forEach((item, i) => {
        const c = node.child(this.element(sh, item, i));
        this.collect(c, sh.item, item);
        c.member = true;
      });
      return;
    }
    if (!isObject(value)) return void (node.member = true);
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const { schema: cs, declared } = this.child(sh, k);
      const c = node.child(`f:${k}`);
      this.collect(c, cs, v);
      // Map entries are members; struct fields only when they hold nothing (null or {}).
      if (!declared || v === null || (isObject(v) && Object.keys(v).length === 0)) c.member = true;
    }
  }

  /** What changed from `a` to `b` (upstream's Compare): added, modified and removed paths. */
  compareFields(schema: Schema | undefined, a: unknown, b: unknown): { added: FieldSet; modified: FieldSet; removed: FieldSet } {
    const out = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
    this.cmp(out, [], schema, a, b);
    return out;
  }

  private cmp(out: { added: FieldSet; modified: FieldSet; removed: FieldSet }, path: string[], schema: Schema | undefined, a: unknown, b: unknown): void {
    // The same value on both sides (a patched object shares what the patch left alone with the
    // stored one, merge-patch.ts): nothing under it changed.
    if (a === b) return;
    const leaf = (): void => {
      if (a === undefined && b !== undefined) out.added.insert(path);
      else if (a !== undefined && b === undefined) out.removed.insert(path);
      else if (!jsonEqual(a, b)) out.modified.insert(path);
    };
    const sh = this.shape(schema, b !== undefined ? b : a);
    // A null list or struct (Go's nil in an empty object) that gets items is there, only empty.
    if (a === null && sh.kind !== 'leaf' && (Array.isArray(b) || isObject(b))) a = Array.isArray(b) ? [] : {};
    if (sh.kind === 'leaf' || a === null || b === null) return leaf();
    const emptyOrAbsent = (v: unknown): boolean => v === undefined || (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0);
    if (emptyOrAbsent(a) && emptyOrAbsent(b)) return leaf();
    if (sh.kind === 'list') {
      if ((a !== undefined && !Array.isArray(a)) || (b !== undefined && !Array.isArray(b))) return leaf();
      // A list that appears or goes is itself added or removed (null is a value, not absence).
      if (a === undefined) out.added.insert(path);
      if (b === undefined) out.removed.insert(path);
      const ia = this.index(sh, a);
      const ib = this.index(sh, b);
      for (const el of new Set([...ia.keys(), ...ib.keys()])) this.cmp(out, [...path, el], sh.item, ia.get(el), ib.get(el));
      return;
    }
    if ((a !== undefined && !isObject(a)) || (b !== undefined && !isObject(b))) return leaf();
    if (path.length > 0 && a === undefined) out.added.insert(path);
    if (path.length > 0 && b === undefined) out.removed.insert(path);
    const ao = (a ?? {}) as Record<string, unknown>;
    const bo = (b ?? {}) as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      this.cmp(out, [...path, `f:${k}`], this.child(sh, k).schema, ao[k], bo[k]);
    }
  }

  /** The apply merge: `config` over `live`, lists merged by their keys, atomic values replaced. */
  mergeFields(schema: Schema | undefined, live: unknown, config: unknown): unknown {
    if (config === undefined) return clone(live);
    if (live === undefined || live === null || config === null) return clone(config);
    const sh = this.shape(schema, config);
    if (sh.kind === 'leaf') return clone(config);
    if (sh.kind === 'list') {
      if (!Array.isArray(live) || !Array.isArray(config)) return clone(config);
      const ic = this.index(sh, config);
      const seen = new Set<string>();
      const out = live.map((item, i) => {
        const el = this.element(sh, item, i);
        seen.add(el);
        return ic.has(el) ? this.mergeFields(sh.item, item, ic.get(el)) : clone(item);
      });
      config.forEach((item, i) => {
        if (!seen.has(this.element(sh, item, i))) out.push(clone(item));
      });
      return out;
    }
    if (!isObject(live) || !isObject(config)) return clone(config);
    const out = clone(live);
    for (const [k, v] of Object.entries(config)) out[k] = this.mergeFields(this.child(sh, k).schema, live[k], v);
    return out;
  }

  /**
   * Removes the value at `path` from `obj` (in place); then every parent this left empty that
   * `keep` has nothing under (someone still owns it) goes too. False when nothing was there.
   */
  removePath(schema: Schema | undefined, obj: unknown, path: readonly string[], keep: FieldSet): boolean {
    const chain: Array<{ container: unknown; at: string | number; schema: Schema | undefined }> = [];
    let cur: unknown = obj;
    let s = schema;
    for (const el of path) {
      const sh = this.shape(s, cur);
      if (el.startsWith('f:') && isObject(cur)) {
        const key = el.slice(2);
        if (!(key in cur)) return false;
        chain.push({ container: cur, at: key, schema: s });
        s = this.child(sh, key).schema;
        cur = cur[key];
      } else if (Array.isArray(cur) && sh.kind === 'list') {
        const i = cur.findIndex((item, n) => this.element(sh, item, n) === el);
        if (i < 0) return false;
        chain.push({ container: cur, at: i, schema: s });
        s = sh.item;
        cur = cur[i];
      } else return false;
    }
    for (let depth = chain.length - 1; depth >= 0; depth--) {
      const { container, at } = chain[depth]!;
      if (depth < chain.length - 1) {
        const v = (container as Record<string | number, unknown>)[at];
        const hollow = Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0;
        const owned = keep.at(path.slice(0, depth + 1));
        if (!hollow || (owned && !owned.empty())) break;
      }
      if (Array.isArray(container)) container.splice(at as number, 1);
      else delete (container as Record<string, unknown>)[at as string];
    }
    return true;
  }
}
