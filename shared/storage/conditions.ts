/**
 * Snapshot and restore conditions (`snapshotv1.Condition`), written the way KubeVirt's helpers
 * write them (reference-snapshot-export-backup.md §0): only type, status, reason and
 * `lastTransitionTime=now`; an existing condition of the same type is replaced only when its
 * status or reason differs (its timestamp survives otherwise); a new type is appended, so the
 * list stays in first-insertion order. Export conditions also compare the message.
 */

export interface StorageCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

/** `conditions` with `type` set to (status, reason), per the rule above. Never mutates its input. */
export function updateCondition(
  conditions: readonly StorageCondition[] | undefined,
  type: string,
  status: 'True' | 'False',
  reason: string,
  nowIso: string,
  opts: { message?: string; compareMessage?: boolean } = {},
): StorageCondition[] {
  const list = [...(conditions ?? [])];
  const next: StorageCondition = { type, status, reason, ...(opts.message ? { message: opts.message } : {}), lastProbeTime: null, lastTransitionTime: nowIso };
  const i = list.findIndex((c) => c.type === type);
  if (i < 0) return [...list, next];
  const old = list[i]!;
  const same = old.status === status && (old.reason ?? '') === reason && (!opts.compareMessage || (old.message ?? '') === (opts.message ?? ''));
  if (!same) list[i] = next;
  return list;
}

export function conditionOf(conditions: readonly StorageCondition[] | undefined, type: string): StorageCondition | undefined {
  return conditions?.find((c) => c.type === type);
}
