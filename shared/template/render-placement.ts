/**
 * Where a launcher pod may run (reference §b.2): the node selector built from the VMI's
 * architecture, machine type, CPU model/features, dedicated CPUs and confidential computing,
 * and the node affinity terms added for `host-model` CPUs and forbidden CPU features.
 */
import type { V1Affinity, V1NodeSelectorRequirement, V1PodAffinityTerm } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import {
  ARCH_NODE_LABEL, CPU_FEATURE_NODE_LABEL_PREFIX, CPU_MANAGER_NODE_LABEL, CPU_MODEL_NODE_LABEL_PREFIX,
  CPU_VENDOR_NODE_LABEL_PREFIX, HYPERV_NODE_LABEL_PREFIX, MACHINE_TYPE_NODE_LABEL_PREFIX, OBSOLETE_HOST_MODEL_NODE_LABEL,
  REALTIME_NODE_LABEL, S390_PV_NODE_LABEL, SCHEDULABLE_NODE_LABEL, SEV_NODE_LABEL, SEVES_NODE_LABEL, SEVSNP_NODE_LABEL,
  TDX_NODE_LABEL, TSC_FREQUENCY_NODE_LABEL_PREFIX, VM_ARCH_NODE_LABEL_PREFIX,
} from '../api/well-known.ts';
import { gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { isCpuDedicated } from './vmi-traits.ts';

const HYPERV_FEATURES = ['vpindex', 'runtime', 'reset', 'synic', 'synictimer', 'frequencies', 'reenlightenment', 'tlbflush', 'ipi'] as const;

/** Sorted copy, so rendering is deterministic and matches Go's sorted map serialisation. */
export function sortedRecord(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k] as string]));
}

/** The launcher pod's node selector. */
export function renderNodeSelector(vmi: VirtualMachineInstance, config: ClusterConfig): Record<string, string> {
  const sel: Record<string, string> = { [SCHEDULABLE_NODE_LABEL]: 'true' };
  const arch = vmi.spec.architecture;
  if (arch) sel[ARCH_NODE_LABEL] = arch.toLowerCase();
  Object.assign(sel, config.nodeSelectors, vmi.spec.nodeSelector ?? {});
  if (isCpuDedicated(vmi)) sel[CPU_MANAGER_NODE_LABEL] = 'true';
  const hyperv = vmi.spec.domain.features?.hyperv as Record<string, { enabled?: boolean } | undefined> | undefined;
  if (hyperv && gateEnabled(config, 'HypervStrictCheck')) {
    for (const f of HYPERV_FEATURES) {
      const state = hyperv[f];
      if (state && state.enabled !== false) sel[`${HYPERV_NODE_LABEL_PREFIX}${f}`] = 'true';
    }
    const evmcs = hyperv['evmcs'];
    if (evmcs && evmcs.enabled !== false) sel[`${CPU_VENDOR_NODE_LABEL_PREFIX}Intel`] = 'true';
  }
  const cpu = vmi.spec.domain.cpu;
  if (cpu?.model && cpu.model !== 'host-model' && cpu.model !== 'host-passthrough') sel[`${CPU_MODEL_NODE_LABEL_PREFIX}${cpu.model}`] = 'true';
  const machine = vmi.status?.machine?.type || vmi.spec.domain.machine?.type;
  if (machine) sel[`${MACHINE_TYPE_NODE_LABEL_PREFIX}${machine}`] = 'true';
  for (const f of cpu?.features ?? []) {
    if (!f.policy || f.policy === 'require') sel[`${CPU_FEATURE_NODE_LABEL_PREFIX}${f.name}`] = 'true';
  }
  const tsc = manualTscFrequency(vmi);
  if (tsc !== undefined) sel[`${TSC_FREQUENCY_NODE_LABEL_PREFIX}${tsc}`] = 'true';
  if (cpu?.realtime !== undefined) sel[REALTIME_NODE_LABEL] = 'true';
  const ls = vmi.spec.domain.launchSecurity;
  // SEV-SNP is SEV too: it needs an SEV node as well as an SNP-capable one.
  if (ls?.sev || ls?.snp) sel[SEV_NODE_LABEL] = 'true';
  if (ls?.sev?.policy?.encryptedState) sel[SEVES_NODE_LABEL] = 'true';
  if (ls?.snp) sel[SEVSNP_NODE_LABEL] = 'true';
  if (ls?.tdx) sel[TDX_NODE_LABEL] = 'true';
  if ((ls as Record<string, unknown> | undefined)?.['ibm'] !== undefined) sel[S390_PV_NODE_LABEL] = 'true';
  if (gateEnabled(config, 'CrossArchitectureVirtualization') && arch) {
    delete sel[ARCH_NODE_LABEL];
    sel[`${VM_ARCH_NODE_LABEL_PREFIX}${arch}`] = 'true';
  }
  return sortedRecord(sel);
}

/**
 * The TSC frequency the VMI must run at, when it needs one pinned (`IsManualTSCFrequencyRequired`):
 * an `invtsc` feature it requires or forces (or Hyper-V re-enlightenment) and the frequency the
 * topology hinter wrote into its status.
 */
function manualTscFrequency(vmi: VirtualMachineInstance): number | undefined {
  const hz = vmi.status?.topologyHints?.tscFrequency;
  if (hz === undefined || hz <= 0) return undefined;
  const invtsc = (vmi.spec.domain.cpu?.features ?? []).some((f) => f.name === 'invtsc' && (f.policy === 'require' || f.policy === 'force'));
  const reenlightenment = (vmi.spec.domain.features?.hyperv?.reenlightenment as { enabled?: boolean } | undefined)?.enabled === true;
  return invtsc || reenlightenment ? hz : undefined;
}

/**
 * The pod affinity: a deep copy of `spec.affinity`, plus `DoesNotExist` requirements for
 * nodes whose host-model CPU is obsolete (host-model VMIs) and for forbidden CPU features,
 * appended to every required term (or as a new term); then `antiAffinity` (persistent
 * reservation) as required pod anti-affinity; with cross-architecture virtualization, a
 * preferred (weight 100) term for nodes of the VMI's own architecture, last.
 */
export function renderAffinity(vmi: VirtualMachineInstance, config: ClusterConfig, antiAffinity: readonly V1PodAffinityTerm[] = []): V1Affinity | undefined {
  const withArch = (a: V1Affinity | undefined): V1Affinity | undefined => {
    const arch = vmi.spec.architecture;
    if (!gateEnabled(config, 'CrossArchitectureVirtualization') || !arch) return a;
    const out: V1Affinity = a ?? {};
    out.nodeAffinity ??= {};
    (out.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ??= []).push({
      weight: 100,
      preference: { matchExpressions: [{ key: ARCH_NODE_LABEL, operator: 'In', values: [arch.toLowerCase()] }] },
    });
    return out;
  };
  const withAnti = (a: V1Affinity | undefined): V1Affinity | undefined => {
    if (antiAffinity.length === 0) return a;
    const out: V1Affinity = a ?? {};
    out.podAntiAffinity ??= {};
    (out.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= []).push(...structuredClone(antiAffinity));
    return out;
  };
  return withArch(withAnti(hostAffinity(vmi)));
}

function hostAffinity(vmi: VirtualMachineInstance): V1Affinity | undefined {
  const affinity = vmi.spec.affinity ? (structuredClone(vmi.spec.affinity) as V1Affinity) : undefined;
  const cpu = vmi.spec.domain.cpu;
  const reqs: V1NodeSelectorRequirement[] = [];
  if (!cpu || !cpu.model || cpu.model === 'host-model') reqs.push({ key: OBSOLETE_HOST_MODEL_NODE_LABEL, operator: 'DoesNotExist' });
  for (const f of cpu?.features ?? []) {
    if (f.policy === 'forbid') reqs.push({ key: `${CPU_FEATURE_NODE_LABEL_PREFIX}${f.name}`, operator: 'DoesNotExist' });
  }
  if (reqs.length === 0) return affinity;
  const out: V1Affinity = affinity ?? {};
  out.nodeAffinity ??= {};
  const required = (out.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] });
  if (required.nodeSelectorTerms.length === 0) required.nodeSelectorTerms.push({ matchExpressions: reqs });
  else for (const term of required.nodeSelectorTerms) term.matchExpressions = [...(term.matchExpressions ?? []), ...reqs];
  return out;
}
