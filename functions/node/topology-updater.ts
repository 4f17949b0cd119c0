/**
 * The node topology updater as one step of a node's pass (KubeVirt runs it as a loop over every
 * node every 30 s, ±20 % jitter; here each node's pass — its events and its once-a-minute
 * re-check and sweep — brings that node's TSC scheduling labels up to date; tsc-labels.ts says
 * what they are). Only a node reporting a valid TSC frequency is looked at, so a cluster whose
 * nodes report none pays nothing; for one that does, the pass lists the VMIs (the frequencies in
 * use) and, unless the KubeVirt CR fixes `minimumClusterTSCFrequency`, the nodes (the lowest one).
 */
import type { V1Node } from '@kubernetes/client-node';
import { NODES, VMIS } from '../../shared/api/index.ts';
import { TransientError, errorText } from '../../shared/errors.ts';
import { lowestTscFrequency, needsVmiNodes, tscHint } from '../../shared/topology/hints.ts';
import type { NodeDeps } from './deps.ts';
import { nodeTsc, tscLabelPatch } from './tsc-labels.ts';

/** Brings `node`'s `scheduling.node.kubevirt.io/tsc-frequency-<Hz>` labels up to date. */
export async function syncTscLabels(node: V1Node, deps: NodeDeps): Promise<void> {
  const name = node.metadata?.name ?? '';
  const tsc = nodeTsc(node);
  if ('error' in tsc) {
    // KubeVirt excludes the node and logs it; a pass that failed would only retry the same label.
    deps.log.warn('Excluding node with invalid tsc-frequency', { key: name, error: tsc.error });
    return;
  }
  if (tsc.hz === 0) return;
  const required = await requiredFrequencies(deps);
  if ('error' in required) {
    deps.log.warn('Skipping TSC frequency updates on all nodes', { key: name, error: required.error });
    return;
  }
  const body = tscLabelPatch(node, tsc.hz, 'scalable' in tsc && tsc.scalable, required.hz);
  if (!body) return;
  try {
    await deps.kube.patch(NODES, undefined, name, { type: 'strategic', body });
  } catch (err) {
    throw new TransientError('FailedPatchNode', `Could not patch TSC frequencies for node ${name}: ${errorText(err)}`, { cause: err });
  }
}

/** The frequencies in use (the VMIs' hints) and the lowest on the cluster; an error for a bad configured minimum. */
async function requiredFrequencies(deps: NodeDeps): Promise<{ hz: number[] } | { error: string }> {
  const config = await deps.clusterConfig();
  const vmis = (await deps.kube.list(VMIS, undefined)).items;
  let nodes: V1Node[] = [];
  let running = new Set<string>();
  if (config.minimumClusterTSCFrequency === undefined) {
    nodes = (await deps.kube.list(NODES, undefined)).items;
    // Unschedulable nodes count only while they run a VMI.
    if (needsVmiNodes(nodes)) running = new Set(vmis.map((v) => v.status?.nodeName ?? '').filter((n) => n !== ''));
  }
  const lowest = tscHint(config.minimumClusterTSCFrequency, () => lowestTscFrequency(nodes, running));
  if ('error' in lowest) return { error: `failed to calculate lowest TSC frequency for nodes: ${lowest.error}` };
  const inUse = new Set(vmis.map((v) => v.status?.topologyHints?.tscFrequency ?? 0).filter((hz) => hz > 0));
  return { hz: [...inUse, lowest.hz] };
}
