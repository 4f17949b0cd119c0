/**
 * The cases whose launcher pod differs from KubeVirt's today, each with the exact differing
 * paths and the cause (docs/fidelity.md has the diagnosis, grouped by root cause). The
 * differential test fails on any difference not listed here, on a listed case whose differences
 * changed, and on a listed case that has become identical (remove its entry): the table can only
 * shrink as causes are fixed.
 */

/** One known-differing case: why, and the normalised paths that differ (`(outcome)`: pod vs refusal). */
export interface ExpectedDifference {
  /** The root cause, as in docs/fidelity.md's table. */
  readonly cause: string;
  /** Sorted differing paths on the emulator lane. */
  readonly paths: readonly string[];
  /** Sorted differing paths on the real control plane, where they differ from `paths`. */
  readonly real?: readonly string[];
}

const OUTCOME = ['(outcome)'];

/** The root causes (docs/fidelity.md, "Differences today"). */
const CAUSE = {
  nadResources: "R1 the oracle's limit, not ours: render-oracle does not find the case's NetworkAttachmentDefinition, so with ExternalNetResourceInjection off it refuses; ours reads the NAD and requests its resource, as KubeVirt's virt-controller does (live lane nad-resource: identical)",
} as const;

export const EXPECTED_DIFFERENCES: Readonly<Record<string, ExpectedDifference>> = {
  'net-resource-injection-off': { cause: CAUSE.nadResources, paths: OUTCOME },
};

/**
 * The same for the offline check (offline-render.test.ts): the renderer alone on the corpus's
 * objects, against KubeVirt's pod before any API server saw it.
 */
export const OFFLINE_EXPECTED_DIFFERENCES: Readonly<Record<string, ExpectedDifference>> = {
  'net-resource-injection-off': { cause: CAUSE.nadResources, paths: OUTCOME },
  // Not a difference of the product: the VMI controller reads the ConfigMap before rendering
  // (shared/template/read-cluster-facts.ts); the pure renderer cannot, and renders.
  'hook-sidecar-configmap-missing': { cause: 'the hook ConfigMap check is the VMI controller\'s, not the pure renderer\'s', paths: OUTCOME },
};
