/**
 * The reconcile's backend-storage steps (decisions in ./backend-storage.ts): the target PVC before
 * the target pod, and the hand-off or clean-up after it. Only VMIs that need backend storage pay
 * any read here.
 *
 * No expectations guard the target PVC's create, unlike KubeVirt's (which reads an informer cache):
 * the claims are listed with a quorum read just before, and one key is reconciled by one worker at
 * a time, so a create that went through is always seen.
 */
import type { MigrationPhase, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { JOBS, PVCS, STORAGE_CLASSES, STORAGE_PROFILES } from '../../shared/api/resources.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import { backendClassAndMode, backendStorageNeeded, currentBackendPvcName, MIGRATION_NAME_LABEL, renderBackendPvc } from '../../shared/storage/backend-storage.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import { backendHandoffPatch, decideBackendFollowUp, migrationTargetPvcs, ownTargetPvcs, planTargetBackend, type PersistentStatePvcs } from './backend-storage.ts';
import type { MigrationDeps } from './deps.ts';
import type { PhaseResult } from './phases.ts';
import { decideRecovery, recoveryJobName, renderRecoveryJob } from './recovery.ts';

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

export interface Recovery {
  /** The phase result to write: unchanged while the Job runs, Succeeded or Failed once it has spoken. */
  readonly result: PhaseResult;
  /** Look again after this many seconds (the Job is not done). */
  readonly waitSeconds?: number;
  readonly done: readonly string[];
}

/**
 * An interrupted migration of backend storage (recovery.ts): one GET of the `recover-<migration>`
 * Job, then create it, wait for it, hand the target claim over (Succeeded) or leave the failure
 * as it is (Failed: the follow-up deletes the target claim), or delete a Job that failed itself.
 * KubeVirt re-reads through its rate-limited error requeue; here the pass asks to be run again.
 */
export async function recoverInterrupted(migration: VirtualMachineInstanceMigration, interrupted: PhaseResult, deps: MigrationDeps): Promise<Recovery> {
  const namespace = migration.metadata?.namespace ?? '';
  const name = recoveryJobName(migration);
  const unchanged: PhaseResult = { phase: (migration.status?.phase ?? '') as MigrationPhase, steps: [] };
  const step = decideRecovery(await deps.kube.get(JOBS, namespace, name));
  switch (step.kind) {
    case 'create': {
      const config = await deps.clusterConfig();
      try {
        await deps.kube.create(JOBS, renderRecoveryJob(migration, config.launcherImage));
      } catch (err) {
        // A read that lagged behind our own create: the Job is there, which is what was wanted.
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      return { result: unchanged, waitSeconds: 1, done: [`a migration recovery had to be initiated (job ${name})`] };
    }
    case 'running':
      return { result: unchanged, waitSeconds: 1, done: [] };
    case 'retry':
      // The Job did not get to look (its deadline, a pod that never ran): make it again.
      await deps.kube.delete(JOBS, namespace, name, { propagationPolicy: 'Background' });
      return { result: unchanged, waitSeconds: 1, done: [`deleted recovery job ${name} to retry: ${step.message}`] };
    case 'failed':
      return { result: interrupted, done: [`recovery job ${name}: the migration did not finish, the source backend PVC prevails`] };
    case 'succeeded': {
      const done = await handOverBackend(migration, deps);
      return { result: { phase: 'Succeeded', steps: ['Succeeded'], ...(interrupted.failure ? { recoveredFrom: interrupted.failure } : {}) }, done: [`recovery job ${name}: the migration finished`, ...done] };
    }
  }
}

/** KubeVirt's `MigrationHandoff` outside the normal path: the target claim becomes the VMI's, the source goes. */
async function handOverBackend(migration: VirtualMachineInstanceMigration, deps: MigrationDeps): Promise<string[]> {
  const pvcs = ownTargetPvcs(migration);
  if (!pvcs) return [];
  const namespace = migration.metadata?.namespace ?? '';
  const done: string[] = [];
  const target = await deps.kube.get(PVCS, namespace, pvcs.target);
  if (target?.metadata?.labels?.[MIGRATION_NAME_LABEL] === migration.metadata?.name) {
    await deps.kube.patch(PVCS, namespace, pvcs.target, { type: 'json', ops: backendHandoffPatch(migration.metadata?.name ?? '', migration.spec.vmiName ?? '') });
    done.push(`handed backend PVC ${pvcs.target} over to the VMI`);
  }
  await deps.kube.delete(PVCS, namespace, pvcs.source);
  done.push(`deleted source backend PVC ${pvcs.source}`);
  return done;
}
