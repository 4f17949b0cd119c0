/**
 * The node topology updater (KubeVirt's virt-controller `pkg/virt-controller/watch/topology`
 * `nodeTopologyUpdater`): which `scheduling.node.kubevirt.io/tsc-frequency-<Hz>` labels a node
 * offers. virt-handler reports a node's own frequency (`cpu-timer.node.kubevirt.io/tsc-frequency`)
 * and whether it can scale it (`cpu-timer.node.kubevirt.io/tsc-scalable`); the launcher pod of a VMI
 * pinned to a frequency selects `scheduling.node.kubevirt.io/tsc-frequency-<its Hz>`, so this loop
 * is what lets such a VMI schedule or migrate at all.
 *
 * The frequencies required on the cluster are every VMI's `status.topologyHints.tscFrequency` in
 * use plus the lowest frequency on the cluster (the hint a new VMI would get) and the node's own. A
 * node that cannot scale offers only those within QEMU's tolerance (250 ppm) of its own frequency;
 * one that can offers those at or below its own, or within the tolerance above it. Labels for
 * frequencies no longer required are removed; labels that do not parse are left alone.
 */
import type { V1Node } from '@kubernetes/client-node';
import { TSC_FREQUENCY_NODE_LABEL_PREFIX } from '../../shared/api/well-known.ts';

export const TSC_FREQUENCY_LABEL = 'cpu-timer.node.kubevirt.io/tsc-frequency';
export const TSC_SCALABLE_LABEL = 'cpu-timer.node.kubevirt.io/tsc-scalable';
/** QEMU accepts a guest TSC frequency within this many parts per million of the host's. */
export const TSC_TOLERANCE_PPM = 250;

/** A node's frequency and scalability; `error` when its frequency label is not a positive integer. */
export type NodeTsc = { hz: number; scalable: boolean } | { hz: 0 } | { error: string };

/** `TSCFrequencyFromNode`: absent label → 0 (the node reports none). */
export function nodeTsc(node: V1Node): NodeTsc {
  const labels = node.metadata?.labels ?? {};
  const name = node.metadata?.name ?? '';
  const raw = labels[TSC_FREQUENCY_LABEL];
  if (raw === undefined) return { hz: 0 };
  if (!/^[+-]?\d+$/.test(raw)) return { error: `tsc frequency on node ${name} is not an int: ${JSON.stringify(raw)}` };
  const hz = Number(raw);
  if (hz <= 0) return { error: `tsc frequency on node ${name} is invalid: expected a frequenchy bigger than 0, but got ${hz}` };
  return { hz, scalable: labels[TSC_SCALABLE_LABEL] === 'true' };
}

/** `ToleranceForFrequency`: 250 ppm of `hz`, rounded down to the Hz. */
export function toleranceFor(hz: number): number {
  return Math.floor(hz * (TSC_TOLERANCE_PPM / 1_000_000));
}

/** The frequencies a node's scheduling labels offer now (labels that do not parse are skipped). */
export function offeredFrequencies(node: V1Node): number[] {
  return Object.keys(node.metadata?.labels ?? {})
    .filter((k) => k.startsWith(TSC_FREQUENCY_NODE_LABEL_PREFIX))
    .map((k) => k.slice(TSC_FREQUENCY_NODE_LABEL_PREFIX.length))
    .filter((s) => /^[+-]?\d+$/.test(s))
    .map(Number);
}

/** `CalculateTSCLabelDiff`: the frequencies to add and to remove on one node. */
export function tscLabelDiff(required: readonly number[], onNode: readonly number[], nodeHz: number, scalable: boolean): { add: number[]; remove: number[] } {
  const tolerance = toleranceFor(nodeHz);
  // A node that cannot scale runs only frequencies within the tolerance of its own.
  const wanted = new Set([...required, nodeHz].filter((hz) => scalable || Math.abs(hz - nodeHz) <= tolerance));
  const remove = onNode.filter((hz) => !wanted.has(hz));
  // A scalable node offers lower frequencies, and higher ones only within the tolerance.
  const add = [...wanted].filter((hz) => !scalable || hz <= nodeHz || Math.abs(hz - nodeHz) <= tolerance);
  return { add, remove };
}

/**
 * The strategic merge patch body that brings `node`'s labels to `required`, or undefined when
 * nothing changes (a label already offered is re-added only in KubeVirt's copy: no change).
 */
export function tscLabelPatch(node: V1Node, nodeHz: number, scalable: boolean, required: readonly number[]): { metadata: { labels: Record<string, string | null> } } | undefined {
  const current = node.metadata?.labels ?? {};
  const { add, remove } = tscLabelDiff(required, offeredFrequencies(node), nodeHz, scalable);
  const labels: Record<string, string | null> = {};
  for (const hz of add) if (current[`${TSC_FREQUENCY_NODE_LABEL_PREFIX}${hz}`] !== 'true') labels[`${TSC_FREQUENCY_NODE_LABEL_PREFIX}${hz}`] = 'true';
  // Only a label that is there: one written as `+5` parses to 5, and KubeVirt's delete of `-5` is a no-op.
  for (const hz of remove) if (`${TSC_FREQUENCY_NODE_LABEL_PREFIX}${hz}` in current) labels[`${TSC_FREQUENCY_NODE_LABEL_PREFIX}${hz}`] = null;
  return Object.keys(labels).length > 0 ? { metadata: { labels } } : undefined;
}
