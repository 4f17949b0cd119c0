/**
 * Field validation (`?fieldValidation=Strict|Warn|Ignore`, the server's default Warn, kubectl's
 * Strict) and the pruning that goes with it. A built-in kind drops what its Go type has no field
 * for and a custom resource what its structural schema does not declare — whatever the
 * directive; the directive only decides whether the client hears about it: a 400 BadRequest
 * `strict decoding error: unknown field "spec.foo", duplicate field "spec.bar"` (Strict), one
 * `Warning: 299` header per problem (Warn), or nothing (Ignore).
 *
 * What is kept as upstream keeps it: apiVersion, kind and metadata (ObjectMeta's fields);
 * subtrees marked `x-kubernetes-preserve-unknown-fields` (still checked where they declare
 * properties); the apiVersion/kind/metadata of `x-kubernetes-embedded-resource` objects;
 * free-form built-in types (RawExtension, FieldsV1) whole. The order of the problems follows
 * upstream's decoders: one pass in document order for a built-in body (a field both unknown and
 * repeated is reported once, as unknown); repeats first, then unknown fields for a custom
 * resource and for any patch (sorted, as the map-based decoders report them).
 */
import { fieldPath } from './duplicate-fields.ts';
import { ApiError, badRequest, invalid } from './errors.ts';
import type { Schema, SchemaIndex } from './openapi/schemas.ts';
import type { ResourceInfo } from './resources.ts';
import { isObject } from './types.ts';

/** The three directives a write may carry. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const OBJECT_META = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' };

/**
 * The request's directive: absent or empty means Warn (the server's default since 1.27); any
 * other value is a 422 on the options kind (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
 */
export function parseFieldValidation(q: URLSearchParams, optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): FieldValidation {
  const raw = q.get('fieldValidation') ?? '';
  if (raw === '') return 'Warn';
  if (raw === 'Strict' || raw === 'Warn' || raw === 'Ignore') return raw;
  throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [{ reason: 'FieldValueNotSupported', field: 'fieldValidation', message: `${JSON.stringify(raw)}: supported values: "", "Ignore", "Strict", "Warn"` }]);
}

/** What one pass over an object found. */
export interface FieldScan {
  /** Unknown field paths, in the order met. */
  unknown: string[];
  /** Unknown and duplicate problems interleaved in document order (a built-in decoder's order). */
  inOrder: string[];
}

interface Walk {
  schemas: SchemaIndex;
  duplicates: ReadonlySet<string>;
  scan: FieldScan;
}

/**
 * Removes from `obj` every field its schema does not declare and reports them; `duplicates`
 * (paths repeated in the body) are woven into `inOrder` where the decoder would meet them. Kinds
 * without a schema are left alone. `obj` itself is changed in place, but nothing below it: a
 * nested object or list that loses a field is replaced by a copy without it, so a patched object
 * may share its subtrees with the stored one (merge-patch.ts).
 */
export function pruneUnknownFields(schemas: SchemaIndex, res: ResourceInfo, obj: Record<string, unknown>, duplicates: readonly string[] = []): FieldScan {
  const scan: FieldScan = { unknown: [], inOrder: [] };
  const root = schemas.of(res);
  if (!root) return scan;
  const walk: Walk = { schemas, duplicates: new Set(duplicates), scan };
  visit(walk, root, obj, '', !res.builtin, true);
  return scan;
}

/**
 * The strict problems of a write in upstream's order. `kind` is `body` for a create or update
 * (built-ins: document order; custom resources: repeats first), `patch` for a patch (repeats in
 * the patch first, then the patched object's unknown fields, sorted).
 */
export function strictProblems(kind: 'body' | 'patch', res: ResourceInfo, scan: FieldScan, duplicates: readonly string[], extra: readonly string[] = []): string[] {
  const dup = duplicates.map((d) => `duplicate field ${JSON.stringify(d)}`);
  if (kind === 'body' && res.builtin) return scan.inOrder;
  const unknown = (kind === 'body' ? crOrder(scan.unknown) : [...scan.unknown].sort()).map((u) => `unknown field ${JSON.stringify(u)}`);
  return [...extra, ...dup, ...unknown];
}

/** A custom resource's decoder: metadata first, then the pruned paths sorted, embedded metadata last. */
function crOrder(paths: readonly string[]): string[] {
  const meta = paths.filter((p) => p.startsWith('metadata.'));
  const embedded = paths.filter((p) => !p.startsWith('metadata.') && p.includes('.metadata.'));
  const rest = paths.filter((p) => !meta.includes(p) && !embedded.includes(p)).sort();
  return [...meta, ...rest, ...embedded];
}

/**
 * Applies the directive: Strict throws `wrap("strict decoding error: …")`, Warn adds one warning
 * per problem, Ignore says nothing.
 */
export function enforceFieldValidation(directive: FieldValidation, problems: readonly string[], warnings: string[], wrap: (message: string) => ApiError = badRequest): void {
  if (problems.length === 0 || directive === 'Ignore') return;
  if (directive === 'Strict') throw wrap(`strict decoding error: ${problems.join(', ')}`);
  warnings.push(...problems);
}

/**
 * How a patch's strict failure reaches the client: the decoder's failure is reported as an
 * invalid `patch` (422,
 * ` "" is invalid: patch: Invalid value: "<value>": strict decoding error: …`), the value being
 * the patched object as JSON (JSON and merge patches) or the patch as Go prints a map (strategic
 * merge, which then reports the unknown fields only; repeated keys alone are a 400 there) — as
 * kube-apiserver 1.37 answers.
 */
export function patchError(type: string, hasUnknown: boolean, patched: unknown, patch: unknown): (message: string) => ApiError {
  const smp = type === 'application/strategic-merge-patch+json';
  if (smp && !hasUnknown) return badRequest;
  const value = smp ? goValue(patch) : JSON.stringify(sortedKeys(patched));
  return (message) => {
    const cause = `Invalid value: ${JSON.stringify(value)}: ${message}`;
    return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${cause}`, { causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'patch' }] });
  };
}

/** Go marshals maps with sorted keys. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortedKeys(v[k])]));
}

/** `map[data:map[b:2] zzz:1]`: a decoded JSON value as Go's `%+v` prints it. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  return String(v);
}

/** Create and update wrap strict errors as the decoder does: `Pod in version "v1" cannot be handled as a Pod: …`. */
export function decodeError(res: ResourceInfo, body: Record<string, unknown>): (message: string) => ApiError {
  const kind = typeof body.kind === 'string' && body.kind ? body.kind : res.kind;
  const apiVersion = typeof body.apiVersion === 'string' && body.apiVersion ? body.apiVersion : res.version;
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  return (message) => badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${res.kind}: ${message}`);
}

function noteDuplicate(w: Walk, path: string): void {
  if (w.duplicates.has(path)) w.scan.inOrder.push(`duplicate field ${JSON.stringify(path)}`);
}

/** Repeats inside a subtree kept without a schema are still repeats. */
function noteDuplicatesUnder(w: Walk, path: string): void {
  for (const d of w.duplicates) if (d === path || d.startsWith(`${path}.`) || d.startsWith(`${path}[`)) w.scan.inOrder.push(`duplicate field ${JSON.stringify(d)}`);
}

/**
 * Values (objects and lists) a walk found nothing to prune in, with the resolved schema it walked
 * them under — one map for a CRD's own structural schema, one for the rest. A patched object shares
 * everything the patch left alone with the stored object, which was pruned when it was written:
 * those subtrees are not walked again. The stored objects are immutable (store.ts), and what the
 * server adds to a request's object after pruning (defaults, metadata) are declared fields; a
 * changed schema is a new schema object, so it walks everything again. Not used when the body has
 * repeated keys, whose reports need the walk.
 */
const cleanStructural = new WeakMap<object, Schema>();
const cleanTyped = new WeakMap<object, Schema>();

/**
 * One value against its schema; answers the value pruned — `value` itself when nothing under it
 * was, else a copy (or, with `inPlace`, `value` changed). `structural` is true inside a CRD's own
 * schema, where an object that declares nothing keeps nothing; a `$ref` leads into built-in
 * types, where such an object (RawExtension, FieldsV1) is free-form.
 */
function visit(w: Walk, schema: Schema | undefined, value: unknown, path: string, structural: boolean, inPlace = false): unknown {
  // A scalar has nothing to prune: no schema lookup for it.
  if (!schema || typeof value !== 'object' || value === null) return value;
  const viaRef = typeof schema.$ref === 'string' || (Array.isArray(schema.allOf) && schema.allOf.some((s) => typeof s.$ref === 'string'));
  const s = w.schemas.resolve(schema);
  if (!s) return value;
  const strict = structural && !viaRef;
  const clean = strict ? cleanStructural : cleanTyped;
  const memo = !inPlace && w.duplicates.size === 0;
  if (memo && clean.get(value) === s) return value;
  const out = Array.isArray(value) ? visitList(w, s, value, path, strict) : visitObject(w, s, value as Record<string, unknown>, path, strict, inPlace);
  if (memo && out === value) clean.set(value, s);
  return out;
}

function visitList(w: Walk, s: Schema, value: unknown[], path: string, strict: boolean): unknown[] {
  if (!s.items) return value;
  let out = value;
  value.forEach((item, i) => {
    if (typeof item !== 'object' || item === null) return;
    const pruned = visit(w, s.items, item, fieldPath(path, i), strict);
    if (pruned === item) return;
    if (out === value) out = [...value];
    out[i] = pruned;
  });
  return out;
}

function visitObject(w: Walk, s: Schema, value: Record<string, unknown>, path: string, strict: boolean, inPlace: boolean): Record<string, unknown> {
  if (s['x-kubernetes-int-or-string']) return value;
  const props = s.properties;
  const addl = s.additionalProperties;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  // Built-in free-form objects, and anything a CRD declares as such, keep what they hold.
  if (!props && addl === undefined && !embedded && (!strict || preserve || s.type !== 'object')) return value;
  let out = value;
  const own = () => (out === value && !inPlace ? (out = { ...value }) : out);
  // Paths are spelled only where one is reported or a subtree is walked: most fields are scalars
  // in a body without repeated keys.
  const noting = w.duplicates.size > 0;
  for (const key of Object.keys(value)) {
    let child: Schema | undefined;
    let childStructural = strict;
    if (embedded && (key === 'apiVersion' || key === 'kind')) {
      if (noting) noteDuplicate(w, fieldPath(path, key));
      continue;
    } else if (embedded && key === 'metadata') {
      child = OBJECT_META;
      childStructural = false;
    } else if (props?.[key]) {
      child = props[key];
    } else if (isObject(addl)) {
      child = addl as Schema;
    } else if (addl === true || preserve) {
      if (noting) noteDuplicatesUnder(w, fieldPath(path, key));
      continue;
    } else {
      const p = fieldPath(path, key);
      w.scan.unknown.push(p);
      w.scan.inOrder.push(`unknown field ${JSON.stringify(p)}`);
      delete own()[key];
      continue;
    }
    if (noting) noteDuplicate(w, fieldPath(path, key));
    const v = value[key];
    if (typeof v !== 'object' || v === null) continue;
    const pruned = visit(w, child, v, fieldPath(path, key), childStructural);
    if (pruned !== v) own()[key] = pruned;
  }
  return out;
}
