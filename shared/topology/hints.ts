/**
 * Topology hints: the TSC frequency a VMI that needs one is pinned to (KubeVirt
 * `pkg/virt-controller/watch/topology` `TopologyHintsForVMI`, `LowestTSCFrequencyOnCluster`,
 * `GetTscFrequencyRequirement`; `lifecycle.go` `addTopologyHints`). A VMI needs one when it
 * requires (or forces) the `invtsc` CPU feature — to boot — or uses Hyper-V re-enlightenment — to
 * migrate; on amd64 only. The hint is the KubeVirt CR's `minimumClusterTSCFrequency` when set (an
 * error when not > 0), else the lowest `cpu-timer.node.kubevirt.io/tsc-frequency` among the nodes
 * that report one and are schedulable or run a VMI. It goes into `status.topologyHints` as the VMI
 * leaves `Pending`'s first pass, and the launcher pod waits for it; the template then pins the pod
 * to `scheduling.node.kubevirt.io/tsc-frequency-<Hz>` nodes. Shared by the VMI controller (the
 * hint) and the node controller's topology updater (the lowest frequency it keeps offered).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';

/** Node label: the node's TSC frequency in Hz, as virt-handler reports it. */
export const TSC_FREQUENCY_LABEL = 'cpu-timer.node.kubevirt.io/tsc-frequency';
const SCHEDULABLE_LABEL = 'kubevirt.io/schedulable';
/** Sync-error reason of a VMI whose hint cannot be made (KubeVirt's spelling). */
export const FAILED_TOPOLOGY_HINTS_REASON = 'FailedGatherhingClusterTopologyHints';

/** Why a VMI needs a TSC frequency: to boot (invtsc), to migrate (re-enlightenment), or not at all. */
export type TscRequirement = 'boot' | 'migration' | undefined;

/** `GetTscFrequencyRequirement` (on amd64; an unset architecture is the cluster's default, amd64). */
export function tscRequirement(vmi: VirtualMachineInstance): TscRequirement {
  if ((vmi.spec.architecture ?? 'amd64') !== 'amd64' && vmi.spec.architecture !== '') return undefined;
  if ((vmi.spec.domain.cpu?.features ?? []).some((f) => f.name === 'invtsc' && (f.policy === 'require' || f.policy === 'force'))) return 'boot';
  if ((vmi.spec.domain.features?.hyperv?.reenlightenment as { enabled?: boolean } | undefined)?.enabled === true) return 'migration';
  return undefined;
}

/** A node's TSC frequency label as a positive integer, else undefined (absent or invalid: excluded). */
function tscOf(node: V1Node): number | undefined {
  const raw = node.metadata?.labels?.[TSC_FREQUENCY_LABEL];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const hz = Number(raw);
  return hz > 0 ? hz : undefined;
}

/**
 * The lowest TSC frequency (Hz) on the cluster, 0 when no node reports one. `nodesRunningVmis`
 * answers for the nodes that are not schedulable (KubeVirt counts those still running VMIs).
 */
export function lowestTscFrequency(nodes: readonly V1Node[], nodesRunningVmis: ReadonlySet<string>): number {
  let lowest = 0;
  for (const n of nodes) {
    const hz = tscOf(n);
    if (hz === undefined) continue;
    if (n.metadata?.labels?.[SCHEDULABLE_LABEL] !== 'true' && !nodesRunningVmis.has(n.metadata?.name ?? '')) continue;
    if (lowest === 0 || hz < lowest) lowest = hz;
  }
  return lowest;
}

/** True when an unschedulable node reports a frequency: only then are the VMIs' nodes needed. */
export function needsVmiNodes(nodes: readonly V1Node[]): boolean {
  return nodes.some((n) => tscOf(n) !== undefined && n.metadata?.labels?.[SCHEDULABLE_LABEL] !== 'true');
}

/** The hint's frequency, or an error (the configured minimum is not > 0). */
export function tscHint(minimumClusterTSCFrequency: number | undefined, lowest: () => number): { hz: number } | { error: string } {
  if (minimumClusterTSCFrequency !== undefined) {
    if (minimumClusterTSCFrequency > 0) return { hz: minimumClusterTSCFrequency };
    return { error: `failed to determine the lowest tsc frequency on the cluster: the configured minimumClusterTSCFrequency must be greater 0, but got ${minimumClusterTSCFrequency}` };
  }
  return { hz: lowest() };
}
