/**
 * Applies RFC 6902 operations to a plain object in memory, the way the restore controller applies
 * a VirtualMachineRestore's `spec.patches` to the VM it is about to create (a clone's MAC,
 * serial, label and annotation patches): leniently, as the JSON-patch library KubeVirt uses —
 * `replace` of an absent member adds it, `remove` of an absent member is a no-op. `test` that
 * fails, and paths through missing parents, are errors. Never mutates its input.
 */
import type { JsonPatchOperation } from './client.ts';

/** RFC 6901: `/a/b~1c` → `['a', 'b/c']`. */
export function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function parentOf(doc: unknown, segments: string[], path: string): { parent: Container; key: string } {
  let cur: unknown = doc;
  for (const s of segments.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (cur !== null && typeof cur === 'object') cur = (cur as Record<string, unknown>)[s];
    else cur = undefined;
    if (cur === undefined || cur === null || typeof cur !== 'object') throw new Error(`path ${path}: missing parent`);
  }
  return { parent: cur as Container, key: segments[segments.length - 1] ?? '' };
}

function read(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const s of parsePointer(path)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) ? cur[Number(s)] : (cur as Record<string, unknown>)[s];
  }
  return cur;
}

function put(doc: unknown, path: string, value: unknown, insert: boolean): void {
  const segments = parsePointer(path);
  const { parent, key } = parentOf(doc, segments, path);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length) throw new Error(`path ${path}: index out of range`);
    if (insert) parent.splice(i, 0, value);
    else parent[i] = value;
  } else parent[key] = value;
}

function drop(doc: unknown, path: string): void {
  const segments = parsePointer(path);
  const { parent, key } = parentOf(doc, segments, path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (i >= 0 && i < parent.length) parent.splice(i, 1);
  } else delete parent[key];
}

/** `doc` with `ops` applied, in order. */
export function applyJsonPatch<T>(doc: T, ops: readonly JsonPatchOperation[]): T {
  const out = structuredClone(doc);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        put(out, op.path, structuredClone(op.value), true);
        break;
      case 'replace':
        put(out, op.path, structuredClone(op.value), false);
        break;
      case 'remove':
        drop(out, op.path);
        break;
      case 'test':
        if (JSON.stringify(read(out, op.path)) !== JSON.stringify(op.value)) throw new Error(`test failed at ${op.path}`);
        break;
      case 'copy':
      case 'move': {
        const value = structuredClone(read(out, op.from ?? ''));
        if (op.op === 'move') drop(out, op.from ?? '');
        put(out, op.path, value, true);
        break;
      }
    }
  }
  return out;
}
