/**
 * Garbage collection of finished migrations (reference §d.7), pure: of a VMI's final migrations
 * that are not being deleted, oldest first, all but the newest 5 go; with each, its target pod if
 * it failed, or its source pod if it completed (those pods are the ones it left behind).
 */
import type { VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isFinal } from './phases.ts';

export const FINISHED_MIGRATIONS_KEPT = 5;

export interface Collected {
  readonly migration: VirtualMachineInstanceMigration;
  /** The pod it left behind, by name, if any. */
  readonly pod: string | undefined;
}

/** The migrations of one VMI to delete now. */
export function collectGarbage(migrations: readonly VirtualMachineInstanceMigration[], keep = FINISHED_MIGRATIONS_KEPT): Collected[] {
  const finished = migrations
    .filter((m) => isFinal(m.status?.phase) && !m.metadata?.deletionTimestamp)
    .sort((a, b) => (Date.parse(a.metadata?.creationTimestamp ?? '') || 0) - (Date.parse(b.metadata?.creationTimestamp ?? '') || 0) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return finished.slice(0, Math.max(0, finished.length - keep)).map((migration) => {
    const ms = migration.status?.migrationState;
    const pod = ms?.failed ? ms.targetPod : ms?.completed ? ms.sourcePod : undefined;
    return { migration, pod };
  });
}
