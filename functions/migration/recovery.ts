/**
 * Recovery of an interrupted backend-storage migration (reference-vm-vmi-depth §2 "Interrupted
 * migration", KubeVirt's `RecoverFromBrokenMigration`), pure. When a migration's target pod goes
 * away (down, vanished, or the VMI ended) while the VMI's persistent TPM/EFI state was being moved
 * to a claim of the migration's own, nobody knows which claim holds the current state: the
 * libvirt migration may have finished (the source launcher then wrote `migrated` into the source
 * claim's `meta` directory) or not. A Job `recover-<migration>` looks, with the launcher image:
 * `ls /meta/migrated || exit 42` on the source claim; a pod failure policy turns exit 42 into a
 * failed Job (reason `PodFailurePolicy`).
 * - Job complete: the target claim prevails — it is handed over to the VMI, the source deleted,
 *   and the migration Succeeded;
 * - failed with `PodFailurePolicy`: the source prevails — the target deleted, the migration Failed;
 * - failed otherwise (the deadline, a crash): the Job is deleted and made again;
 * - still running: look again later.
 * A shared (ReadWriteMany) claim, or none recorded yet, needs no recovery: the migration fails.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { KIND_MIGRATION, KUBEVIRT_API_VERSION } from '../../shared/api/well-known.ts';
import { backendStorageNeeded } from '../../shared/storage/backend-storage.ts';
import { ownTargetPvcs } from './backend-storage.ts';

/** The exit code the check uses for "no marker": the pod failure policy fails the Job on it. */
export const MARKER_MISSING_EXIT_CODE = 42;
const CONTAINER = 'container';
const VOLUME = 'backend-storage';

/** `recover-<migration>`. */
export function recoveryJobName(migration: VirtualMachineInstanceMigration): string {
  return `recover-${migration.metadata?.name ?? ''}`;
}

/** An interrupted migration needs the Job: the VMI keeps backend state and the migration made a claim of its own. */
export function needsRecovery(migration: VirtualMachineInstanceMigration, vmi: VirtualMachineInstance | undefined): boolean {
  return vmi !== undefined && backendStorageNeeded(vmi) && ownTargetPvcs(migration) !== undefined;
}

/** The Job, as KubeVirt's `buildRecoveryJob` makes it (namespace: the migration's). */
export function renderRecoveryJob(migration: VirtualMachineInstanceMigration, launcherImage: string): V1Job {
  const name = recoveryJobName(migration);
  const source = migration.status?.migrationState?.sourcePersistentStatePVCName ?? '';
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: migration.metadata?.namespace ?? '',
      ownerReferences: [{ apiVersion: KUBEVIRT_API_VERSION, kind: KIND_MIGRATION, name: migration.metadata?.name ?? '', uid: migration.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      activeDeadlineSeconds: 30,
      backoffLimit: 0,
      ttlSecondsAfterFinished: 30,
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: CONTAINER, operator: 'In', values: [MARKER_MISSING_EXIT_CODE] } }] },
      template: {
        metadata: { generateName: `${name}-` },
        spec: {
          restartPolicy: 'Never',
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{
            name: CONTAINER,
            image: launcherImage,
            command: ['bash'],
            args: ['-c', `ls /meta/migrated || exit ${MARKER_MISSING_EXIT_CODE}`],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            volumeMounts: [{ name: VOLUME, mountPath: '/meta', subPath: 'meta' }],
          }],
          volumes: [{ name: VOLUME, persistentVolumeClaim: { claimName: source } }],
        },
      },
    },
  };
}

export type RecoveryStep =
  /** No Job yet: create it, then look again. */
  | { readonly kind: 'create' }
  /** The Job is still going: look again. */
  | { readonly kind: 'running' }
  /** The marker is there: hand the target claim over, the migration Succeeded. */
  | { readonly kind: 'succeeded' }
  /** The marker is missing: drop the target claim, the migration Failed. */
  | { readonly kind: 'failed' }
  /** The Job itself failed (not the check): delete it and try again. */
  | { readonly kind: 'retry'; readonly message: string };

/** What the Job's conditions say, read in order as KubeVirt reads them. */
export function decideRecovery(job: V1Job | undefined): RecoveryStep {
  if (!job) return { kind: 'create' };
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete') return { kind: 'succeeded' };
    if (c.type === 'Failed') return c.reason === 'PodFailurePolicy' ? { kind: 'failed' } : { kind: 'retry', message: c.message ?? c.reason ?? 'recovery job failed' };
  }
  return { kind: 'running' };
}
