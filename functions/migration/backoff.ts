/**
 * The evacuation / workload-update backoff (reference §d.4), pure: only migrations annotated
 * `kubevirt.io/evacuationMigration` or `kubevirt.io/workloadUpdateMigration`, and only the newest
 * such migration of the VMI, wait. Walking the VMI's older such migrations newest → oldest until a
 * Succeeded one, every Failed one (not being deleted) doubles the backoff, starting at 20 s; the
 * migration waits until the last failure's end + backoff.
 */
import type { VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { EVACUATION_MIGRATION_ANNOTATION as EVACUATION_ANNOTATION, WORKLOAD_UPDATE_MIGRATION_ANNOTATION as WORKLOAD_UPDATE_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
export { EVACUATION_ANNOTATION, WORKLOAD_UPDATE_ANNOTATION };

export const IGNORE_BACKOFF_ANNOTATION = 'kubevirt.io/func-test-ignore-migration-backoff';
export const INITIAL_BACKOFF_SECONDS = 20;

function eligible(m: VirtualMachineInstanceMigration): boolean {
  const a = m.metadata?.annotations ?? {};
  return EVACUATION_ANNOTATION in a || WORKLOAD_UPDATE_ANNOTATION in a;
}

function created(m: VirtualMachineInstanceMigration): number {
  return Date.parse(m.metadata?.creationTimestamp ?? '') || 0;
}

/** When the migration entered Failed (its transition timestamp), epoch ms. */
function failedAt(m: VirtualMachineInstanceMigration): number | undefined {
  const t = m.status?.phaseTransitionTimestamps?.findLast((p) => p.phase === 'Failed')?.phaseTransitionTimestamp;
  return t ? Date.parse(t) : undefined;
}

/** Seconds `migration` must still wait at `now` (epoch ms), or 0. `all` = the VMI's migrations. */
export function backoffSeconds(migration: VirtualMachineInstanceMigration, all: readonly VirtualMachineInstanceMigration[], now: number): number {
  if (!eligible(migration) || IGNORE_BACKOFF_ANNOTATION in (migration.metadata?.annotations ?? {})) return 0;
  const others = all.filter((m) => eligible(m) && m.metadata?.uid !== migration.metadata?.uid).sort((a, b) => created(b) - created(a));
  // Only the newest eligible migration backs off.
  if (others.some((m) => created(m) > created(migration))) return 0;
  let backoff = 0;
  let lastFailure: number | undefined;
  for (const m of others) {
    if (m.status?.phase === 'Succeeded') break;
    if (m.status?.phase !== 'Failed' || m.metadata?.deletionTimestamp) continue;
    backoff = backoff === 0 ? INITIAL_BACKOFF_SECONDS : backoff * 2;
    lastFailure = Math.max(lastFailure ?? 0, failedAt(m) ?? 0);
  }
  if (lastFailure === undefined) return 0;
  return Math.max(0, (lastFailure + backoff * 1000 - now) / 1000);
}
