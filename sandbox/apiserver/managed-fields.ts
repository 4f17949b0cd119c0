/**
 * `metadata.managedFields` as k8s.io/apiserver's field manager keeps it. Every write that names
 * a manager (`?fieldManager=`, else the User-Agent up to its first "/", as upstream derives it:
 * `kubectl/v1.33.0 (linux/amd64) …` → `kubectl`, none → `unknown`) records an `Update` entry owning what it added
 * or changed; whoever owned those paths before loses them, and removed paths leave every owner.
 * Entries are keyed by manager, operation, subresource and — for updates only — apiVersion;
 * `time` moves only when the entry gains something. Apply entries are written by
 * server-side-apply.ts with the same encoding. Never owned: apiVersion, kind and the metadata
 * the server sets (name, namespace, uid, resourceVersion, generation, creationTimestamp,
 * managedFields); `status` on the main resource of a kind with a `/status` subresource, `spec`
 * on `/status` (upstream's reset fields).
 */
import type { IncomingMessage } from 'node:http';
import { FieldSet } from './field-set.ts';
import type { Schema } from './openapi/schemas.ts';
import type { ResourceInfo } from './resources.ts';
import type { Typed } from './typed-fields.ts';
import { isObject, type KubeObject } from './types.ts';

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** A decoded entry: its identity and the paths it owns. */
export interface Manager {
  entry: Omit<ManagedFieldsEntry, 'fieldsV1' | 'fieldsType'>;
  set: FieldSet;
}

/** Managers by identity (manager, operation, subresource, and apiVersion for updates). */
export type Managers = Map<string, Manager>;

/** The identity of an entry; an applier keeps one entry whatever version it applies at. */
export function managerId(e: Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({ manager: e.manager ?? '', operation: e.operation ?? '', apiVersion: e.operation === 'Apply' ? '' : (e.apiVersion ?? ''), subresource: e.subresource ?? '' });
}

/** The manager a write names: `?fieldManager=`, else the User-Agent's product (printable, ≤ 128). */
export function managerOf(q: URLSearchParams, req: IncomingMessage): string {
  const explicit = q.get('fieldManager');
  if (explicit) return explicit;
  const product = (req.headers['user-agent'] ?? '').split('/')[0] ?? '';
  // A client that sends no User-Agent is recorded as "unknown", as kube-apiserver does.
  return [...product].filter((c) => /\P{C}/u.test(c)).join('').slice(0, 129) || 'unknown';
}

/**
 * The `fieldsV1` objects {@link encodeManagedFields} wrote, and for each set decoded from one of
 * them that object: a write leaves most entries as they were, and an entry whose set is still the
 * one decoded (FieldSet.difference answers the set itself when it removes nothing) is written
 * back as the same object instead of being encoded again. Only our own encoding is reused: what a
 * client sent is re-encoded (sorted, normalised) as before.
 */
const encoded = new WeakSet<object>();
const decodedFrom = new WeakMap<FieldSet, Record<string, unknown>>();

/** Reads `metadata.managedFields` (anything malformed reads as no entry). */
export function decodeManagedFields(list: unknown): Managers {
  const out: Managers = new Map();
  if (!Array.isArray(list)) return out;
  for (const raw of list) {
    if (!isObject(raw)) continue;
    const { fieldsV1, fieldsType: _t, ...entry } = raw as ManagedFieldsEntry;
    const id = managerId(entry);
    const set = FieldSet.fromFieldsV1(fieldsV1);
    if (isObject(fieldsV1) && encoded.has(fieldsV1)) decodedFrom.set(set, fieldsV1);
    const prev = out.get(id);
    out.set(id, { entry, set: prev ? prev.set.union(set) : set });
  }
  return out;
}

/** Writes managers back in upstream's order (operation, time, manager, apiVersion, subresource); empty ones are dropped. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] | undefined {
  const entries = [...managers.values()].filter((m) => !m.set.empty());
  if (entries.length === 0) return undefined;
  const seconds = (t?: string): number => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  const cmp = (a: string | undefined, b: string | undefined): number => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
  entries.sort((p, q) => cmp(p.entry.operation, q.entry.operation) || seconds(p.entry.time) - seconds(q.entry.time) || cmp(p.entry.manager, q.entry.manager) || cmp(p.entry.apiVersion, q.entry.apiVersion) || cmp(p.entry.subresource, q.entry.subresource));
  return entries.map(({ entry, set }) => {
    const out: ManagedFieldsEntry = {};
    if (entry.manager !== undefined) out.manager = entry.manager;
    if (entry.operation !== undefined) out.operation = entry.operation;
    if (entry.apiVersion !== undefined) out.apiVersion = entry.apiVersion;
    if (entry.time !== undefined) out.time = entry.time;
    out.fieldsType = 'FieldsV1';
    out.fieldsV1 = decodedFrom.get(set) ?? set.toFieldsV1();
    encoded.add(out.fieldsV1);
    if (entry.subresource) out.subresource = entry.subresource;
    return out;
  });
}

const SERVER_META = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'selfLink', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

/** `set` without what no manager ever owns for this write (see the file comment). */
export function withoutIgnored(set: FieldSet, res: ResourceInfo, subresource?: string): FieldSet {
  const out = set.copy();
  for (const top of ['f:apiVersion', 'f:kind', 'f:metadata']) {
    const n = out.children.get(top);
    if (n) n.member = false;
  }
  const meta = out.children.get('f:metadata');
  for (const k of SERVER_META) meta?.children.delete(`f:${k}`);
  if (subresource === 'status') out.children.delete('f:spec');
  else if (res.status && subresource === undefined) out.children.delete('f:status');
  return out;
}

/** The object without its managedFields (what field ownership is computed over). */
export function withoutManagedFields(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * The "before" of a create: an empty object as upstream's typed conversion sees one — a built-in
 * Go type always has its struct fields (see {@link Typed.emptyBuiltin}), a custom resource has
 * nothing.
 */
export function emptyObject(typed: Typed, res: ResourceInfo, schema: Schema | undefined): KubeObject {
  if (!res.builtin) return { metadata: {} };
  return { ...typed.emptyBuiltin(schema), metadata: {} };
}

/** One write by `manager`: who owns what afterwards. */
export interface UpdateWrite {
  typed: Typed;
  schema: Schema | undefined;
  res: ResourceInfo;
  subresource?: string;
  /** The object before (undefined for a create). */
  live: KubeObject | undefined;
  next: KubeObject;
  manager: string;
  apiVersion: string;
  now: string;
}

/**
 * The managedFields after an update-style write (create, update, non-apply patch). Entries the
 * client sent are taken over when there are any (that is how clients reset them), else the
 * live object's.
 */
export function updateManagedFields(w: UpdateWrite): ManagedFieldsEntry[] | undefined {
  let managers = w.subresource ? new Map() : decodeManagedFields(w.next.metadata.managedFields);
  if (managers.size === 0) managers = decodeManagedFields(w.live?.metadata.managedFields);
  const before = w.live ? withoutManagedFields(w.live) : emptyObject(w.typed, w.res, w.schema);
  const diff = w.typed.compareFields(w.schema, before, withoutManagedFields(w.next));
  const changed = withoutIgnored(diff.modified.union(diff.added), w.res, w.subresource);
  const removed = withoutIgnored(diff.removed, w.res, w.subresource);
  for (const m of managers.values()) m.set = m.set.difference(changed).difference(removed);
  if (!changed.empty()) {
    const entry = { manager: w.manager, operation: 'Update' as const, apiVersion: w.apiVersion, time: w.now, ...(w.subresource ? { subresource: w.subresource } : {}) };
    const id = managerId(entry);
    const prev = managers.get(id);
    managers.set(id, { entry, set: prev ? prev.set.union(changed) : changed });
  }
  return encodeManagedFields(managers);
}
