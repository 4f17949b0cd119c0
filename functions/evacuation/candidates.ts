/**
 * Which VMIs must leave a node, and which of those get a migration now (reference
 * node-drain-updates §2.2 steps 4–6). Two paths: the deprecated drain taint (every VMI on the
 * node), and the eviction webhook's mark (`status.evacuationNodeName` naming the node the VMI is
 * still on). No limits here: every candidate gets a migration at once, and the migration
 * controller's limits (5 per cluster, 2 outbound per node) hold them back (§2.5).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isFinalMigration, isFinalVmi, isMarkedForEviction, isMigratable, isMigrating, migratesOnEviction, migrationVmiKey } from '../../shared/api/vmi-eviction.ts';

/** The drain taint: key `nodeDrainTaintKey`, effect NoSchedule; the value is ignored. */
export function hasDrainTaint(node: V1Node, taintKey: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === taintKey && t.effect === 'NoSchedule');
}

/** `vmisToMigrate`: on a tainted node all of its VMIs, otherwise the marked ones not yet moved nor moving. */
export function vmisToConsider(node: V1Node, vmisOnNode: readonly VirtualMachineInstance[], taintKey: string, nowMs: number): VirtualMachineInstance[] {
  if (hasDrainTaint(node, taintKey)) return [...vmisOnNode];
  return vmisOnNode.filter((v) => isMarkedForEviction(v) && v.status?.nodeName === v.status?.evacuationNodeName && !isMigrating(v, nowMs));
}

/** Pods controlled by the VMI (by UID) that have not ended: more than one means an earlier migration's pods are still around. */
export function activePodCount(vmi: VirtualMachineInstance, pods: readonly V1Pod[]): number {
  return pods.filter(
    (p) =>
      p.metadata?.namespace === vmi.metadata?.namespace &&
      p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === vmi.metadata?.uid) &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed',
  ).length;
}

export interface Selection {
  candidates: VirtualMachineInstance[];
  /** Only used for the early return: KubeVirt emits no event for them. */
  nonMigratable: VirtualMachineInstance[];
}

/** The filters of step 5, in KubeVirt's order. */
export function selectCandidates(
  vmis: readonly VirtualMachineInstance[],
  unfinished: readonly VirtualMachineInstanceMigration[],
  pods: readonly V1Pod[],
  clusterStrategy: string | undefined,
): Selection {
  const withMigration = new Set(unfinished.filter((m) => !isFinalMigration(m)).map(migrationVmiKey));
  const out: Selection = { candidates: [], nonMigratable: [] };
  for (const vmi of vmis) {
    if (isFinalVmi(vmi) || vmi.metadata?.deletionTimestamp) continue;
    if (!migratesOnEviction(vmi, clusterStrategy)) continue;
    if (!isMigratable(vmi)) {
      out.nonMigratable.push(vmi);
      continue;
    }
    if (withMigration.has(`${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`)) continue;
    if (activePodCount(vmi, pods) > 1) continue;
    out.candidates.push(vmi);
  }
  return out;
}
