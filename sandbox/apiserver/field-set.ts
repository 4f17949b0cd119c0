/**
 * Sets of field paths, as structured-merge-diff keeps them for server-side apply: a tree whose
 * edges are path elements spelled as in `managedFields[].fieldsV1` — `f:name` (a field or map
 * key), `k:{"name":"nginx"}` (a list item by its map keys, keys sorted), `v:"x"` (a set item by
 * value), `i:0` (an item by index) — and whose nodes may be members themselves (`".": {}` in
 * FieldsV1 when they also have children). Pure data: no schema knowledge here.
 */

/** One node of a field set. */
export class FieldSet {
  /** This path itself is in the set. */
  member = false;
  readonly children = new Map<string, FieldSet>();

  /** The child at `element`, created when absent. */
  child(element: string): FieldSet {
    let c = this.children.get(element);
    if (!c) {
      c = new FieldSet();
      this.children.set(element, c);
    }
    return c;
  }

  /** Nothing is in the set. */
  empty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  /** Adds the path `elements`. */
  insert(elements: readonly string[]): void {
    let n: FieldSet = this;
    for (const e of elements) n = n.child(e);
    n.member = true;
  }

  /** True when the path `elements` is a member. */
  has(elements: readonly string[]): boolean {
    let n: FieldSet | undefined = this;
    for (const e of elements) n = n?.children.get(e);
    return n?.member ?? false;
  }

  /** The subtree at `elements` (undefined when there is none). */
  at(elements: readonly string[]): FieldSet | undefined {
    let n: FieldSet | undefined = this;
    for (const e of elements) n = n?.children.get(e);
    return n;
  }

  /** A new set with the members of both. */
  union(other: FieldSet): FieldSet {
    const out = this.copy();
    out.addAll(other);
    return out;
  }

  /** Adds every member of `other` to this set (in place). */
  addAll(other: FieldSet): void {
    if (other.member) this.member = true;
    for (const [e, c] of other.children) this.child(e).addAll(c);
  }

  /**
   * The members of this set that `other` lacks: this set itself when they share no member (sets
   * are not changed once built, so callers may hold the answer as they would a copy), else a new one.
   */
  difference(other: FieldSet): FieldSet {
    if (!this.#sharesMember(other)) return this;
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [e, c] of this.children) {
      const o = other.children.get(e);
      const d = o ? c.difference(o) : c.copy();
      if (!d.empty()) out.children.set(e, d);
    }
    return out;
  }

  /** True when some path is a member of both (walks only the paths both have). */
  #sharesMember(other: FieldSet): boolean {
    if (this.member && other.member) return true;
    const [small, large] = this.children.size <= other.children.size ? [this, other] : [other, this];
    for (const [e, c] of small.children) {
      const o = large.children.get(e);
      if (o && c.#sharesMember(o)) return true;
    }
    return false;
  }

  /** A new set with the members in both. */
  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [e, c] of this.children) {
      const o = other.children.get(e);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.empty()) out.children.set(e, i);
    }
    return out;
  }

  copy(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [e, c] of this.children) out.children.set(e, c.copy());
    return out;
  }

  /** Every member path, upstream's iteration order: a node's members before its subtrees, each sorted. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    const sorted = [...this.children.keys()].sort(compareElements);
    for (const e of sorted) if (this.children.get(e)!.member) out.push([...prefix, e]);
    for (const e of sorted) {
      const c = this.children.get(e)!;
      if (c.children.size > 0) out.push(...c.paths([...prefix, e]));
    }
    return out;
  }

  /** The FieldsV1 JSON object (`{"f:spec":{"f:replicas":{}}}`), elements sorted as upstream serialises them. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.#writeChildren(out);
    return out;
  }

  /**
   * Writes the non-empty children into `out` in one pass (a member with children as
   * `{".": {}, …}`, without children as `{}`); true when it wrote any.
   */
  #writeChildren(out: Record<string, unknown>): boolean {
    const elements = [...this.children.keys()];
    if (elements.length > 1) elements.sort(compareElements);
    let wrote = false;
    for (const e of elements) {
      const c = this.children.get(e)!;
      if (c.member) {
        const body: Record<string, unknown> = { '.': {} };
        out[e] = c.#writeChildren(body) ? body : {};
        wrote = true;
      } else {
        const body: Record<string, unknown> = {};
        if (c.#writeChildren(body)) {
          out[e] = body;
          wrote = true;
        }
      }
    }
    return wrote;
  }

  /** Reads a FieldsV1 object. */
  static fromFieldsV1(value: unknown): FieldSet {
    const out = new FieldSet();
    const read = (node: FieldSet, v: unknown): void => {
      if (!v || typeof v !== 'object') return;
      for (const [k, c] of Object.entries(v as Record<string, unknown>)) {
        if (k === '.') node.member = true;
        else {
          const child = node.child(k);
          const keys = c && typeof c === 'object' ? Object.keys(c) : [];
          // A leaf (`{}`) is a member; an inner node is one only when it says so with ".".
          if (keys.length === 0) child.member = true;
          read(child, c);
        }
      }
    };
    read(out, value);
    return out;
  }
}

const TYPE_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** structured-merge-diff's element order: field names, then keys, values, indices. */
export function compareElements(a: string, b: string): number {
  const ta = TYPE_ORDER[a[0]!] ?? 9;
  const tb = TYPE_ORDER[b[0]!] ?? 9;
  if (ta !== tb) return ta - tb;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `.spec.containers[name="nginx"].image`: a path as conflict messages print it. */
export function pathString(elements: readonly string[]): string {
  return elements
    .map((e) => {
      const body = e.slice(2);
      switch (e[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(keys).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
