/**
 * How the VM controller writes: conditional JSON patches, field by field. A `test` op on every
 * field it replaces makes the patch fail with a Conflict if someone (virt-api adding a state-change
 * request, another worker) changed that field since our read, instead of silently overwriting it.
 */
import { isDeepStrictEqual } from 'node:util';
import { escapeJsonPointer as segment, type JsonPatchOperation } from '../../shared/kube/client.ts';

/**
 * Ops turning `before` into `after` at `path` (e.g. `/status`), top-level field by field. When
 * the parent itself is absent the whole object is added in one op (a child `add` would fail).
 * That `add` replaces whatever the parent holds by then, and no `test` of the parent can guard
 * it, so it is guarded by `resourceVersion` (the one `before` was read at): a stale read —
 * a watch-cache read, a retried pass — that saw no status must not wipe a status written since,
 * e.g. the state-change request virt-api added for `virtctl start`. Conflict, re-read, retry.
 */
export function fieldPatch(path: string, before: object | undefined, after: object, fields?: readonly string[], resourceVersion?: string): JsonPatchOperation[] {
  const b = before as Record<string, unknown> | undefined;
  const a = after as Record<string, unknown>;
  const keys = fields ?? [...new Set([...Object.keys(b ?? {}), ...Object.keys(a)])];
  const changed = keys.filter((k) => !isDeepStrictEqual(b?.[k], a[k]));
  if (changed.length === 0) return [];
  if (b === undefined) {
    const value = Object.fromEntries(keys.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]));
    const add: JsonPatchOperation = { op: 'add', path, value };
    return resourceVersion === undefined ? [add] : [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, add];
  }
  const ops: JsonPatchOperation[] = [];
  for (const k of changed) {
    const p = `${path}/${segment(k)}`;
    if (a[k] === undefined) ops.push({ op: 'test', path: p, value: b[k] }, { op: 'remove', path: p });
    else if (b[k] === undefined) ops.push({ op: 'add', path: p, value: a[k] });
    else ops.push({ op: 'test', path: p, value: b[k] }, { op: 'replace', path: p, value: a[k] });
  }
  return ops;
}

/**
 * A metadata patch (finalizers, annotations) guarded by the resourceVersion read: an `add` of a
 * field that was absent cannot be guarded by a `test` of the field itself, so two workers adding
 * a finalizer at once would both "succeed" — the resourceVersion test makes one of them conflict.
 */
export function metadataPatch(resourceVersion: string | undefined, before: object | undefined, after: object, fields: readonly string[]): JsonPatchOperation[] {
  const ops = fieldPatch('/metadata', before, after, fields);
  if (ops.length === 0 || resourceVersion === undefined) return ops;
  return [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
}
