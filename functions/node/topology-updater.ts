/**
 * The node topology updater as one step of a node's pass (KubeVirt runs it as a loop over every
 * node every 30 s, ±20 % jitter; here each node's pass — its events and its once-a-minute
 * re-check and sweep — brings that node's TSC scheduling labels up to date; tsc-labels.ts says
 * what they are). Only a node reporting a valid TSC frequency is looked at, so a cluster whose
 * nodes report none pays nothing; for one that does, the pass lists the VMIs (the frequencies in
 * use) and, unless the KubeVirt CR fixes `minimumClusterTSCFrequency`, the nodes (the lowest one).
 *
 * Those two lists are cluster-wide facts, the same for every node: KubeVirt reads them once per
 * loop of 30 s for all nodes. A pass here reads them through the runtime's
 * {@link frequencyMemo} — once per {@link REQUIRED_FREQUENCIES_TTL_MS} per process, however many
 * nodes' passes and sweeps come in that time. Each node's pass listing every VMI was
 * nodes × VMIs objects a minute at least (every Node event wakes its node): at 1,000 VMIs the
 * once-a-minute sweep's passes parsed for a third of a second at once, which the VMI function's
 * keys of that moment waited out (docs/scale.md, the steady-rate p99).
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
  const required = deps.frequencies ? await deps.frequencies.read(deps) : await requiredFrequencies(deps);
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

/** KubeVirt's topology updater's period: how long one reading of the required frequencies serves every node. */
export const REQUIRED_FREQUENCIES_TTL_MS = 30_000;

type Required = { hz: number[] } | { error: string };

/** One reading of the required frequencies shared by the passes of one process (see the file's comment). */
export interface FrequencyMemo {
  /** The frequencies, read anew (by this pass, with its client) when the last reading is older than the TTL on `deps.now`. */
  read(deps: Pick<NodeDeps, 'kube' | 'clusterConfig' | 'now'>): Promise<Required>;
}

/** A memo of the required frequencies for `ttlMs` of the passes' clock; concurrent passes share one reading. */
export function frequencyMemo(ttlMs = REQUIRED_FREQUENCIES_TTL_MS): FrequencyMemo {
  let last: { at: number; value: Promise<Required> } | undefined;
  return {
    read(deps) {
      const now = deps.now();
      if (last && now - last.at < ttlMs && now >= last.at) return last.value;
      const value = requiredFrequencies(deps);
      const entry = { at: now, value };
      last = entry;
      // A failed reading is not kept: the next pass reads again.
      value.catch(() => {
        if (last === entry) last = undefined;
      });
      return value;
    },
  };
}

/** The frequencies in use (the VMIs' hints) and the lowest on the cluster; an error for a bad configured minimum. */
async function requiredFrequencies(deps: Pick<NodeDeps, 'kube' | 'clusterConfig'>): Promise<Required> {
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
