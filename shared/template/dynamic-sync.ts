/**
 * KubeVirt's dynamic label and annotation sync, one way: VM template → VMI (the VM controller)
 * and VMI → launcher pod (the VMI controller). A fixed set of keys, plus the deployment's
 * `additional*Sync` lists (virt-controller's `--additional-launcher-{labels,annotations}-sync`;
 * here `ClusterConfig.launcherLabelsSync` / `launcherAnnotationsSync`), is kept equal on the
 * target: set when the source has it, removed when it does not. A pattern ending in `*` matches a
 * prefix (a bare `*` matches nothing, so that nothing is synced by accident). Pure.
 */
import { escapeJsonPointer, type JsonPatchOperation } from '../kube/client.ts';

/** The descheduler's opt-in and opt-out annotations, always synced. */
export const DESCHEDULER_EVICT_ANNOTATION = 'descheduler.alpha.kubernetes.io/evict';
export const DESCHEDULER_PREFER_NO_EVICTION_ANNOTATION = 'descheduler.alpha.kubernetes.io/prefer-no-eviction';

/**
 * `target` with the keys `patterns` name made equal to `source`'s, or undefined when nothing
 * changes. Never mutates its inputs.
 */
export function syncKeys(patterns: readonly string[], source: Readonly<Record<string, string>>, target: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const next: Record<string, string> = { ...target };
  let changed = false;
  const syncKey = (key: string) => {
    const want = source[key];
    if (want === next[key]) return;
    changed = true;
    if (want === undefined) delete next[key];
    else next[key] = want;
  };
  for (const pattern of patterns) {
    if (pattern === '') continue;
    if (!pattern.endsWith('*')) {
      syncKey(pattern);
      continue;
    }
    const prefix = pattern.slice(0, -1);
    if (prefix === '') continue;
    for (const key of new Set([...Object.keys(source), ...Object.keys(target)])) if (key.startsWith(prefix)) syncKey(key);
  }
  return changed ? next : undefined;
}

/**
 * The JSON patch that writes `next` as `metadata.<field>`: an `add` when the object has none, else
 * a `test` of the map as read and a `replace` (a concurrent change fails the patch, as KubeVirt's).
 */
export function metadataMapOps(field: 'labels' | 'annotations', current: Readonly<Record<string, string>> | undefined, next: Record<string, string>): JsonPatchOperation[] {
  const path = `/metadata/${escapeJsonPointer(field)}`;
  if (current === undefined) return [{ op: 'add', path, value: next }];
  return [{ op: 'test', path, value: current }, { op: 'replace', path, value: next }];
}
