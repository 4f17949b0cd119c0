/** RFC 7386 JSON merge patch: `null` deletes a key, arrays and scalars replace whole. */
import { clone, isObject } from './types.ts';

/** Applies `patch` to a copy of `target`. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}
