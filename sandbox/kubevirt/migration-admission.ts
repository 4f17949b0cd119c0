/**
 * virt-api's migration create admitter, as a pure decision (KubeVirt `pkg/virt-api/webhooks/
 * validating-webhook/admitters/migration-create-admitter.go` `Admit`, `isMigratable`): a
 * VirtualMachineInstanceMigration is refused when it names no VMI, a VMI that does not exist or
 * is final, or a VMI virt-handler reports `LiveMigratable=False` (a decentralized migration may
 * still move non-migratable disks). The emulator runs it as an admission hook on the create
 * (migration-webhook.ts); the real lane's kube-apiserver calls it as KubeVirt's
 * `migration-create-validator.kubevirt.io` webhook (eviction-webhook-server.ts).
 *
 * Not reproduced: the priority rule (only virt-controller's service account may set
 * `spec.priority` — here the evacuation and workload-update controllers are ours, under our own
 * identities) and the in-flight conflict rule (it selects migrations by the
 * `kubevirt.io/vmi-name` label virt-api's migration mutator adds, which nothing adds here).
 */
import type { Vmi } from '../nodes/objects.ts';

/** The webhook's name in KubeVirt's ValidatingWebhookConfiguration, and its path. */
export const MIGRATION_CREATE_VALIDATOR = 'migration-create-validator.kubevirt.io';
export const MIGRATION_CREATE_PATH = '/migration-validate-create';

/** The fields of a migration the decision reads. */
export interface MigrationRequest {
  metadata?: { namespace?: string };
  spec?: { vmiName?: string; sendTo?: unknown; receive?: unknown };
}

export type MigrationVerdict = { allowed: true } | { allowed: false; message: string };

/** The verdict; `vmi` is the named VMI as the API holds it (undefined: none). */
export function admitMigration(migration: MigrationRequest, vmi: Vmi | undefined): MigrationVerdict {
  const name = migration.spec?.vmiName ?? '';
  if (name === '') return { allowed: false, message: 'spec.vmiName: vmiName is missing' };
  if (!vmi) return { allowed: false, message: `the VMI "${migration.metadata?.namespace ?? ''}/${name}" does not exist` };
  const phase = vmi.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { allowed: false, message: 'Cannot migrate VMI in finalized state.' };
  const decentralized = migration.spec?.sendTo !== undefined || migration.spec?.receive !== undefined;
  for (const c of vmi.status?.conditions ?? []) {
    if (c.type !== 'LiveMigratable' || c.status !== 'False') continue;
    if (c.reason === 'DisksNotLiveMigratable' && decentralized) continue;
    return { allowed: false, message: `Cannot migrate VMI, Reason: ${c.reason ?? ''}, Message: ${c.message ?? ''}` };
  }
  return { allowed: true };
}
