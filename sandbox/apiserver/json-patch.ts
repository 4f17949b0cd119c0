/**
 * RFC 6902 JSON patch with the Kubernetes (evanphx/json-patch v4) quirks: a `test` of a missing
 * path with value `null` passes; a `replace` of a missing object key adds it; a failed `test` or a missing path is 422; a body that is not a
 * patch array (client-node's default for merge-shaped bodies) is 400; > 10 000 ops is 413.
 */
import { duplicateJsonFields } from './duplicate-fields.ts';
import { badRequest, patchRejected, requestTooLarge } from './errors.ts';
import { clone, isObject, jsonEqual } from './types.ts';

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

const MAX_OPS = 10_000;

function decode(body: unknown): Op[] {
  if (!Array.isArray(body)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (body.length > MAX_OPS) throw requestTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_OPS}, got ${body.length}`);
  return body.map((raw) => {
    if (!isObject(raw) || typeof raw.op !== 'string') throw badRequest('json: cannot unmarshal into jsonpatch.Operation');
    if (typeof raw.path !== 'string') throw patchRejected(`Unable to ${raw.op}: missing path`);
    return raw as unknown as Op;
  });
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw patchRejected(`invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * Parent container and last token of a path (throws 422 when the parent is missing). Every
 * container on the way is made the patch's own first — copied once, the copy put in its parent —
 * so that changing the parent leaves the document patched unchanged.
 */
function parentOf(doc: unknown, tokens: string[], path: string, owned: WeakSet<object>): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    let next: unknown;
    if (Array.isArray(cur)) next = cur[Number(t)];
    else if (isObject(cur)) next = cur[t];
    if (next === undefined) throw patchRejected(`doc is missing path: "${path}": missing value`);
    if ((Array.isArray(next) || isObject(next)) && !owned.has(next)) {
      next = Array.isArray(next) ? [...next] : { ...next };
      owned.add(next as object);
      if (Array.isArray(cur)) cur[Number(t)] = next;
      else (cur as Record<string, unknown>)[t] = next;
    }
    cur = next;
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw patchRejected(`doc is missing path: "${path}": missing value`);
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function index(arr: unknown[], key: string, path: string, allowEnd: boolean): number {
  if (allowEnd && key === '-') return arr.length;
  const i = /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : NaN;
  if (!(i >= 0 && i <= arr.length - (allowEnd ? 0 : 1))) throw patchRejected(`Unable to access invalid index: ${key} (path ${path})`);
  return i;
}

function read(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(t) ? cur[Number(t)] : undefined;
    else if (isObject(cur)) cur = Object.hasOwn(cur, t) ? cur[t] : undefined;
    else return undefined;
  }
  return cur;
}

function add(doc: unknown, path: string, value: unknown, owned: WeakSet<object>): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, path, owned);
  if (Array.isArray(parent)) parent.splice(index(parent, key, path, true), 0, value);
  else parent[key] = value;
  return doc;
}

function remove(doc: unknown, path: string, owned: WeakSet<object>): unknown {
  const tokens = pointer(path);
  const { parent, key } = parentOf(doc, tokens, path, owned);
  if (Array.isArray(parent)) parent.splice(index(parent, key, path, false), 1);
  else {
    if (!Object.hasOwn(parent, key)) throw patchRejected(`Unable to remove nonexistent key: ${key}: missing value`);
    delete parent[key];
  }
  return doc;
}

/**
 * Applies a JSON patch body to `doc` without changing it: the result is new along the paths the
 * operations touch and shares every other subtree with `doc` (stored objects are immutable).
 */
export function applyJsonPatch<T>(doc: T, body: unknown): T {
  const ops = decode(body);
  // The root is the patch's own from the start; values put in are copies of the patch's.
  const owned = new WeakSet<object>();
  let out: unknown = Array.isArray(doc) ? [...doc] : isObject(doc) ? { ...doc } : doc;
  if (typeof out === 'object' && out !== null) owned.add(out);
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        out = add(out, op.path, clone(op.value), owned);
        break;
      case 'remove':
        out = remove(out, op.path, owned);
        break;
      case 'replace': {
        const tokens = pointer(op.path);
        if (tokens.length === 0) {
          out = clone(op.value);
          break;
        }
        const { parent, key } = parentOf(out, tokens, op.path, owned);
        if (Array.isArray(parent)) parent[index(parent, key, op.path, false)] = clone(op.value);
        // evanphx/json-patch v4 (what kube-apiserver applies) looks an object's key up without
        // checking it is there: `replace` of a missing key sets it, like `add` (KubeVirt's VM
        // controller replaces a missing `/metadata/finalizers`). Arrays keep the index check.
        else parent[key] = clone(op.value);
        break;
      }
      case 'move':
      case 'copy': {
        if (typeof op.from !== 'string') throw patchRejected(`Unable to ${op.op}: missing from`);
        const v = read(out, op.from);
        if (v === undefined) throw patchRejected(`doc is missing from path: "${op.from}": missing value`);
        if (op.op === 'move') out = remove(out, op.from, owned);
        out = add(out, op.path, clone(v), owned);
        break;
      }
      case 'test': {
        const v = read(out, op.path);
        // evanphx quirk: a missing value tests equal to null.
        const ok = v === undefined ? op.value === null || op.value === undefined : jsonEqual(v, op.value);
        if (!ok) throw patchRejected(`testing value ${op.path} failed: test failed`);
        break;
      }
      default:
        throw patchRejected(`Unexpected kind: ${op.op}`);
    }
  }
  return out as T;
}

const OPERATION_FIELDS = new Set(['op', 'path', 'value', 'from']);

/**
 * Strict problems of the operations themselves, as upstream words them:
 * `json patch unknown field "[0].foo"`, `json patch duplicate field "[1].path"` (operation order).
 */
export function jsonPatchProblems(body: unknown, text: string | undefined): string[] {
  if (!Array.isArray(body)) return [];
  const duplicates = text ? duplicateJsonFields(text) : [];
  const out: string[] = [];
  body.forEach((op, i) => {
    if (isObject(op)) for (const k of Object.keys(op)) if (!OPERATION_FIELDS.has(k)) out.push(`json patch unknown field ${JSON.stringify(`[${i}].${k}`)}`);
    for (const d of duplicates) if (d.startsWith(`[${i}].`)) out.push(`json patch duplicate field ${JSON.stringify(d)}`);
  });
  return out;
}
