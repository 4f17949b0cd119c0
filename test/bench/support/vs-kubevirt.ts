/**
 * Ours against KubeVirt's virt-controller on the same run (issue 33's targets): each figure a
 * ratio that reads the same way — above 1 where ours is faster for speeds, ours / KubeVirt's for
 * costs. Pure.
 *
 * - lagRunning: KubeVirt's lag after the last create until all Running / ours (≥ 1: ours shorter);
 * - lagScheduled: the same until all Scheduled;
 * - vmisPerSecondRunning: ours / KubeVirt's VMIs/s to Running (≥ 1: ours faster);
 * - requestsPerVmi, writesPerVmi, cpuMsPerVmi: ours / KubeVirt's (≤ 1: ours fewer);
 * - memoryKbPerVmi: ours / KubeVirt's, measured differently (a retained JS heap, a Go RSS growth).
 */

/** The `controller` figures of a burst to Running (e2e-runs.ts), or their medians. */
export interface ControllerFigures {
  readonly lagAfterLastCreateScheduledS?: number;
  readonly lagAfterLastCreateRunningS?: number;
  readonly vmisPerSecondRunning?: number;
  readonly requests?: { readonly requestsPerVmi?: number; readonly writesPerVmi?: number };
  readonly cpuMsPerVmi?: number;
  readonly memory?: { readonly kbPerVmi?: number };
}

const r2 = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? undefined : Math.round((a / b) * 100) / 100;

/** `ours` against `kubevirt`; a ratio is absent where either figure is. */
export function versusKubevirt(ours: ControllerFigures | undefined, kubevirt: ControllerFigures | undefined): Record<string, number | undefined> | undefined {
  if (!ours || !kubevirt) return undefined;
  return {
    lagRunning: r2(kubevirt.lagAfterLastCreateRunningS, ours.lagAfterLastCreateRunningS),
    lagScheduled: r2(kubevirt.lagAfterLastCreateScheduledS, ours.lagAfterLastCreateScheduledS),
    vmisPerSecondRunning: r2(ours.vmisPerSecondRunning, kubevirt.vmisPerSecondRunning),
    requestsPerVmi: r2(ours.requests?.requestsPerVmi, kubevirt.requests?.requestsPerVmi),
    writesPerVmi: r2(ours.requests?.writesPerVmi, kubevirt.requests?.writesPerVmi),
    cpuMsPerVmi: r2(ours.cpuMsPerVmi, kubevirt.cpuMsPerVmi),
    memoryKbPerVmi: r2(ours.memory?.kbPerVmi, kubevirt.memory?.kbPerVmi),
  };
}

/** For each of our systems that ran, its ratios against KubeVirt's (none when KubeVirt's did not run). */
export function ratiosVsKubevirt(medians: Readonly<Record<string, unknown>>): Record<string, Record<string, number | undefined>> {
  const kv = medians.kubevirt as ControllerFigures | undefined;
  const out: Record<string, Record<string, number | undefined>> = {};
  for (const sys of ['serverless', 'baseline']) {
    const v = versusKubevirt(medians[sys] as ControllerFigures | undefined, kv);
    if (v) out[sys] = v;
  }
  return out;
}
