/**
 * virt-api's migration create mutator (pkg/virt-api/webhooks/mutating-webhook/mutators/
 * migration-create-mutator.go): every VirtualMachineInstanceMigration created gets the label
 * `kubevirt.io/vmi-name` = its `spec.vmiName` and the finalizer `kubevirt.io/migrationJobFinalize`
 * appended. KubeVirt's migration controller never adds that finalizer itself; it only removes it
 * once the migration is final.
 */
import { MIGRATION_FINALIZER } from '../../shared/api/well-known.ts';

/** `kubevirt.io/vmi-name`: KubeVirt's MigrationSelectorLabel. */
export const MIGRATION_SELECTOR_LABEL = 'kubevirt.io/vmi-name';

export function mutateMigrationOnCreate(migration: Record<string, unknown>): Record<string, unknown> {
  const meta = { ...((migration.metadata ?? {}) as { labels?: Record<string, string>; finalizers?: string[] }) };
  const vmiName = ((migration.spec ?? {}) as { vmiName?: string }).vmiName ?? '';
  meta.labels = { ...(meta.labels ?? {}), [MIGRATION_SELECTOR_LABEL]: vmiName };
  meta.finalizers = [...(meta.finalizers ?? []), MIGRATION_FINALIZER];
  return { ...migration, metadata: meta };
}
