/**
 * The reconcile's backend-storage steps (decisions in ./backend-storage.ts): the target PVC before
 * the target pod, and the hand-off or clean-up after it. Only VMIs that need backend storage pay
 * any read here.
 *
 * No expectations guard the target PVC's create, unlike KubeVirt's (which reads an informer cache):
 * the claims are listed with a quorum read just before, and one key is reconciled by one worker at
 * a time, so a create that went through is always seen.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { PVCS, STORAGE_CLASSES, STORAGE_PROFILES } from '../../shared/api/resources.ts';
import { backendClassAndMode, backendStorageNeeded, currentBackendPvcName, MIGRATION_NAME_LABEL, renderBackendPvc } from '../../shared/storage/backend-storage.ts';
import type { ClusterConfig } from '../../shared/template/cluster-config.ts';
import { backendHandoffPatch, decideBackendFollowUp, migrationTargetPvcs, ownTargetPvcs, planTargetBackend, type PersistentStatePvcs } from './backend-storage.ts';
import type { MigrationDeps } from './deps.ts';

export type TargetBackend = { readonly kind: 'none' } | { readonly kind: 'ready'; readonly pvcs: PersistentStatePvcs } | { readonly kind: 'error'; readonly message: string };

/** The backend PVC the target pod mounts: the shared source, the migration's own, or a new one. */
export async function prepareTargetBackend(vmi: VirtualMachineInstance, migration: VirtualMachineInstanceMigration, config: ClusterConfig, deps: MigrationDeps): Promise<TargetBackend> {
  if (!backendStorageNeeded(vmi)) return { kind: 'none' };
  const namespace = vmi.metadata?.namespace ?? '';
  const sourceName = currentBackendPvcName(vmi);
  const [source, own] = await Promise.all([
    sourceName ? deps.kube.get(PVCS, namespace, sourceName) : Promise.resolve(undefined),
    deps.kube.list(PVCS, namespace, { labelSelector: `${MIGRATION_NAME_LABEL}=${migration.metadata?.name ?? ''}` }),
  ]);
  const plan = planTargetBackend(sourceName, source, migrationTargetPvcs(own.items, migration));
  if (plan.kind === 'error') return plan;
  if (plan.kind === 'use') return { kind: 'ready', pvcs: plan.pvcs };
  const [classes, profiles] = await Promise.all([deps.kube.list(STORAGE_CLASSES, undefined), deps.kube.list(STORAGE_PROFILES, undefined)]);
  const choice = backendClassAndMode(config.vmStateStorageClass, classes.items, profiles.items);
  if ('error' in choice) return { kind: 'error', message: choice.error };
  const created = await deps.kube.create(PVCS, renderBackendPvc(vmi, choice.className, choice.accessMode, migration.metadata?.name ?? ''));
  return { kind: 'ready', pvcs: { source: plan.source, target: created.metadata?.name ?? '' } };
}

/**
 * After the target pod: hand the migration's own target PVC over to the VMI once its domain is
 * ready there, then delete the source; delete the target of a migration that failed before.
 * Returns what it did, for the trace and the events.
 */
export async function followUpBackend(migration: VirtualMachineInstanceMigration, vmi: VirtualMachineInstance, phase: string, deps: MigrationDeps): Promise<string[]> {
  const pvcs = ownTargetPvcs(migration);
  if (!pvcs || !backendStorageNeeded(vmi)) return [];
  // Nothing to look at before the target domain is ready, unless the migration failed.
  const ms = vmi.status?.migrationState;
  const targetReady = ms?.migrationUid === migration.metadata?.uid && ms?.targetNodeDomainReadyTimestamp !== undefined;
  if (!targetReady && phase !== 'Failed') return [];
  const namespace = vmi.metadata?.namespace ?? '';
  const done: string[] = [];
  let [target, source] = await Promise.all([deps.kube.get(PVCS, namespace, pvcs.target), deps.kube.get(PVCS, namespace, pvcs.source)]);
  // At most the hand-off and the source's deletion in one pass.
  for (let step = 0; step < 2; step++) {
    const next = decideBackendFollowUp({ migration, vmi, phase, target, source });
    if (next.kind === 'none') break;
    if (next.kind === 'hand-off') {
      target = await deps.kube.patch(PVCS, namespace, next.target, { type: 'json', ops: backendHandoffPatch(migration.metadata?.name ?? '', vmi.metadata?.name ?? '') });
      done.push(`handed backend PVC ${next.target} over to the VMI`);
    } else {
      const name = next.kind === 'delete-source' ? next.source : next.target;
      await deps.kube.delete(PVCS, namespace, name); // a claim already gone answers false: what was wanted
      done.push(`deleted ${next.kind === 'delete-source' ? 'source' : 'target'} backend PVC ${name}`);
      break;
    }
  }
  return done;
}

/** A migration whose VMI is gone: its own target PVC, never handed over, goes too. */
export async function dropUnhandedTarget(migration: VirtualMachineInstanceMigration, deps: MigrationDeps): Promise<void> {
  const pvcs = ownTargetPvcs(migration);
  if (!pvcs) return;
  const namespace = migration.metadata?.namespace ?? '';
  const target = await deps.kube.get(PVCS, namespace, pvcs.target);
  if (target && !target.metadata?.deletionTimestamp && target.metadata?.labels?.[MIGRATION_NAME_LABEL] === migration.metadata?.name) await deps.kube.delete(PVCS, namespace, pvcs.target);
}
