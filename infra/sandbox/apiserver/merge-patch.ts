/** RFC 7386 JSON merge patch: `null` deletes a key, arrays and scalars replace whole. */
import { clone, isObject } from './types.ts';

/** Applies `patch` to a copy of `target` (one deep copy of it, then merged in place). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  return mergeInto(isObject(target) ? clone(target) : {}, patch);
}

/** Merges `patch` into `out`, which the caller owns (a copy): nothing but `out` is changed. */
function mergeInto(out: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isObject(v)) out[k] = mergeInto(isObject(out[k]) ? out[k] : {}, v);
    else out[k] = Array.isArray(v) ? clone(v) : v;
  }
  return out;
}
