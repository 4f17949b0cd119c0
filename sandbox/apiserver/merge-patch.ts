/** RFC 7386 JSON merge patch: `null` deletes a key, arrays and scalars replace whole. */
import { clone, isObject } from './types.ts';

/**
 * Applies `patch` to `target` without changing it: the result is new along the paths the patch
 * names and shares every other subtree with `target` (stored objects are immutable, store.ts).
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  return mergeInto(target, patch);
}

/** A new object: `target`'s keys (in their order) with `patch` merged in. */
function mergeInto(target: unknown, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isObject(v)) out[k] = mergeInto(out[k], v);
    else out[k] = Array.isArray(v) ? clone(v) : v;
  }
  return out;
}
