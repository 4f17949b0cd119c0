/**
 * Migration policies (reference §d.6), pure: which MigrationPolicy applies to a VMI, and the
 * migration options that result from the cluster's `migrations` config overridden by it. The
 * result is written to `vmi.status.migrationState.migrationConfiguration` at hand-off, where
 * virt-handler reads it.
 */
import type { MigrationPolicy, VMIMConfigurationOptions, VirtualMachineInstance } from '../../shared/api/index.ts';
import type { MigrationSettings } from '../../shared/config/cluster-config.ts';
import { canonicalQuantity } from '../../shared/api/quantity.ts';

interface Score {
  readonly policy: MigrationPolicy;
  readonly vmiLabels: number;
  readonly nsLabels: number;
}

function matched(selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>): number | undefined {
  let n = 0;
  for (const [k, v] of Object.entries(selector ?? {})) {
    if (labels[k] !== v) return undefined;
    n++;
  }
  return n;
}

/**
 * The policy that wins for `vmi`: every selector label must match; the highest number of matched
 * labels wins, ties go to more VMI labels, then to the lexicographically smallest name. A policy
 * without `selectors` never matches. KubeVirt's quirk is kept: the namespace selector is only
 * evaluated when the VMI has a (non-nil) label map.
 */
export function matchPolicy(policies: readonly MigrationPolicy[], vmi: VirtualMachineInstance, namespaceLabels: Readonly<Record<string, string>>): MigrationPolicy | undefined {
  const vmiLabels = vmi.metadata?.labels;
  let best: Score | undefined;
  for (const policy of policies) {
    const selectors = policy.spec?.selectors;
    if (!selectors) continue;
    const v = matched(selectors.virtualMachineInstanceSelector, vmiLabels ?? {});
    if (v === undefined) continue;
    const n = vmiLabels ? matched(selectors.namespaceSelector, namespaceLabels) : 0;
    if (n === undefined) continue;
    const score: Score = { policy, vmiLabels: v, nsLabels: n };
    if (!best || better(score, best)) best = score;
  }
  return best?.policy;
}

function better(a: Score, b: Score): boolean {
  const ta = a.vmiLabels + a.nsLabels;
  const tb = b.vmiLabels + b.nsLabels;
  if (ta !== tb) return ta > tb;
  if (a.vmiLabels !== b.vmiLabels) return a.vmiLabels > b.vmiLabels;
  return (a.policy.metadata?.name ?? '') < (b.policy.metadata?.name ?? '');
}

/** A quantity as Kubernetes serialises it; an unparsable one as written (the CR's validation refuses those). */
function canonicalOrAsIs(q: string): string {
  try {
    return canonicalQuantity(q);
  } catch {
    return q;
  }
}

/**
 * The cluster's migration options (`ToVMIMConfigurationOptions`), overridden by `policy`'s non-nil
 * fields. As KubeVirt serialises them: `disableTLS` and `matchSELinuxLevelOnMigration` only when
 * the CR sets them (KubeVirt's defaults leave both nil), the bandwidth as a canonical quantity
 * (`0Mi` → `0`).
 */
export function resolveMigrationConfiguration(settings: MigrationSettings, policy: MigrationPolicy | undefined): VMIMConfigurationOptions {
  const options: VMIMConfigurationOptions = {
    allowAutoConverge: settings.allowAutoConverge,
    allowPostCopy: settings.allowPostCopy,
    allowWorkloadDisruption: settings.allowWorkloadDisruption,
    bandwidthPerMigration: canonicalOrAsIs(settings.bandwidthPerMigration),
    completionTimeoutPerGiB: settings.completionTimeoutPerGiB,
    ...(settings.declared.disableTLS !== undefined ? { disableTLS: settings.declared.disableTLS } : {}),
    ...(settings.declared.matchSELinuxLevelOnMigration !== undefined ? { matchSELinuxLevelOnMigration: settings.declared.matchSELinuxLevelOnMigration } : {}),
    maxDowntimeMs: settings.maxDowntimeMs,
    nodeDrainTaintKey: settings.nodeDrainTaintKey,
    parallelMigrationsPerCluster: settings.parallelMigrationsPerCluster,
    parallelOutboundMigrationsPerNode: settings.parallelOutboundMigrationsPerNode,
    progressTimeout: settings.progressTimeout,
    unsafeMigrationOverride: settings.unsafeMigrationOverride,
    utilityVolumesTimeout: settings.utilityVolumesTimeout,
    ...(settings.network !== undefined ? { network: settings.network } : {}),
  };
  const spec = policy?.spec;
  if (!spec) return options;
  if (spec.allowAutoConverge !== undefined) options.allowAutoConverge = spec.allowAutoConverge;
  if (spec.bandwidthPerMigration !== undefined) options.bandwidthPerMigration = canonicalOrAsIs(String(spec.bandwidthPerMigration));
  if (spec.completionTimeoutPerGiB !== undefined) options.completionTimeoutPerGiB = spec.completionTimeoutPerGiB;
  if (spec.maxDowntimeMs !== undefined) options.maxDowntimeMs = spec.maxDowntimeMs;
  if (spec.allowPostCopy !== undefined) {
    options.allowPostCopy = spec.allowPostCopy;
    // allowWorkloadDisruption follows allowPostCopy unless the policy sets it.
    options.allowWorkloadDisruption = spec.allowPostCopy;
  }
  if (spec.allowWorkloadDisruption !== undefined) options.allowWorkloadDisruption = spec.allowWorkloadDisruption;
  if (spec.experimental !== undefined) options.experimental = spec.experimental;
  return options;
}
