/**
 * Pure questions about migrations that the migration controller and the relay both ask: a
 * migration's queue priority, and whether a migration has given back its parallel-limit slot.
 * Read from raw watch objects as well as typed ones, so only the fields both carry are used.
 */
import { MIGRATION_FINALIZER } from '../api/well-known.ts';

/** KubeVirt's priorities (`pkg/util/migrations`): `spec.priority` → queue priority. */
export function migrationPriority(priority: unknown): number {
  switch (priority) {
    case 'system-critical':
      return 100;
    case 'user-triggered':
      return 50;
    case 'system-maintenance':
      return 20;
    default:
      return 0;
  }
}

/** The least a slot question reads of a migration. */
export interface MigrationLike {
  readonly metadata?: { readonly finalizers?: readonly string[] | undefined; readonly deletionTimestamp?: unknown } | undefined;
  readonly status?: { readonly phase?: unknown } | undefined;
}

/** Phase `Succeeded` or `Failed`. */
export function isMigrationFinal(m: MigrationLike): boolean {
  return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed';
}

/**
 * Waiting for a parallel-limit slot as far as an observer can tell: not deleting, no phase yet or
 * `Pending` (KubeVirt's re-enqueue takes the `Pending` ones; a migration turns `Scheduling` in the
 * pass that creates its target pod).
 */
export function isMigrationWaiting(m: MigrationLike): boolean {
  const phase = m.status?.phase ?? '';
  return (phase === '' || phase === 'Pending') && (m.metadata?.deletionTimestamp === undefined || m.metadata.deletionTimestamp === null);
}

/**
 * The migration no longer holds a slot: it is final and its finalizer is gone. The migration
 * reconcile gives its leases back after it writes the final phase and before it removes
 * `kubevirt.io/migrationJobFinalize` (functions/migration/reconcile.ts), so the first object seen
 * final without the finalizer comes after the release: a migration woken by it finds the slot free.
 */
export function hasReleasedSlot(m: MigrationLike): boolean {
  return isMigrationFinal(m) && !(m.metadata?.finalizers ?? []).includes(MIGRATION_FINALIZER);
}
