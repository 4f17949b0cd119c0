/**
 * The migration's pods: which of the VMI's pods is this migration's target and which is the
 * source (reference §d.2 step 4), and the target pod as the template service renders it
 * (reference §b.8: the launcher pod with images pinned to the source pod's digests, required
 * anti-affinity to the VMI's other pods — hence to the source node — the migration's added node
 * selector, the `kubevirt.io/migrationJobUID` label and `kubevirt.io/migrationJobName` annotation,
 * and the SELinux level).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { APP_LABEL, LAUNCHER_APP, MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import type { ClusterConfig } from '../../shared/template/cluster-config.ts';
import { renderTargetPod } from '../../shared/template/render-target-pod.ts';
import { currentVmiPod, isPodFinal } from '../vmi/pods.ts';

/** This migration's target pods (normally one): launcher pods labelled with its UID. */
export function targetPodsOf(pods: readonly V1Pod[], migration: VirtualMachineInstanceMigration): V1Pod[] {
  const uid = migration.metadata?.uid;
  return pods.filter((p) => p.metadata?.labels?.[APP_LABEL] === LAUNCHER_APP && uid !== undefined && p.metadata.labels[MIGRATION_JOB_UID_LABEL] === uid);
}

/** The pod the VMI runs in now (KubeVirt's CurrentVMIPod), never one of this migration's targets. */
export function sourcePodOf(vmi: VirtualMachineInstance, pods: readonly V1Pod[], migration: VirtualMachineInstanceMigration): V1Pod | undefined {
  const targets = new Set(targetPodsOf(pods, migration));
  return currentVmiPod(vmi, pods.filter((p) => !targets.has(p)));
}

/** VMI pods that are not final: KubeVirt waits while more than one exists (a previous target still going). */
export function liveVmiPods(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => !isPodFinal(p));
}

/** The target pod for `migration` of `vmi`, rendered by the template service. */
export function renderMigrationTargetPod(vmi: VirtualMachineInstance, migration: VirtualMachineInstanceMigration, sourcePod: V1Pod, config: ClusterConfig): V1Pod {
  return renderTargetPod(vmi, migration, sourcePod, config);
}
