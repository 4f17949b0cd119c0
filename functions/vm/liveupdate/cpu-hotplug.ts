/**
 * CPU hotplug (KubeVirt's `handleCPUChangeRequest`, reference-vm-vmi-depth §5): raising the
 * template's sockets on a running VMI patches the VMI's sockets and its CPU request/limit; the
 * VMI controller then marks it `HotVCPUChange` and the workload updater migrates it. The checks in
 * KubeVirt's order. Pure.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { isMigrating } from '../../../shared/api/vmi-eviction.ts';
import { VMI_CONDITION } from '../../../shared/api/well-known.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import { vcpuCount } from '../../../shared/liveupdate/hotplug-conditions.ts';
import { addQuantity, formatQuantity, milliQuantity, parseQuantity } from '../../../shared/api/quantity.ts';
import { NONE, refuse, restart, testReplace, type LiveChange } from './change.ts';

export interface CpuInput {
  /** The VM template spec, instance type and preference expanded. */
  readonly template: VirtualMachineInstanceSpec;
  readonly vmi: VirtualMachineInstance;
  readonly cpuAllocationRatio: number;
  /** Epoch ms (is the VMI migrating?). */
  readonly now: number;
}

/** What the CPU handler does for this pass. */
export function cpuChange({ template, vmi, cpuAllocationRatio, now }: CpuInput): LiveChange {
  const want = template.domain.cpu;
  const have = vmi.spec.domain.cpu;
  if (vmi.metadata?.deletionTimestamp || !want || !have) return NONE;
  if ((want.sockets ?? 0) === (have.sockets ?? 0)) return NONE;
  if (vmi.status?.conditions?.some((c) => c.type === VMI_CONDITION.VCPUChange && c.status === 'True')) return refuse('another CPU hotplug is in progress');
  if (isMigrating(vmi, now)) return refuse('CPU hotplug is not allowed while VMI is migrating');
  // Before the reduction rule, so a VMI with maxSockets 0 (no hotplug) lands here for any change.
  if ((want.sockets ?? 0) > (have.maxSockets ?? 0)) return restart("CPU sockets updated in template spec to a value higher than what's available");
  if ((want.sockets ?? 0) < (have.sockets ?? 0)) return restart('Reduction of CPU socket count requires a restart');
  if (template.architecture === 'arm64') return restart("ARM doesn't support CPU hotplug");

  const ops: JsonPatchOperation[] = testReplace('/spec/domain/cpu/sockets', have.sockets, want.sockets);
  const delta = vcpuCount(want) - vcpuCount(have);
  // Integer division, as KubeVirt: ratio 10 → 100m per vCPU.
  const step = milliQuantity(BigInt(delta) * BigInt(Math.trunc(1000 / cpuAllocationRatio)));
  for (const kind of ['requests', 'limits'] as const) {
    if (template.domain.resources?.[kind]?.['cpu'] === undefined) continue;
    const before = vmi.spec.domain.resources?.[kind]?.['cpu'];
    const base = before === undefined ? milliQuantity(0) : parseQuantity(before, `spec.domain.resources.${kind}.cpu`);
    ops.push(...testReplace(`/spec/domain/resources/${kind}/cpu`, before, formatQuantity(addQuantity(base, step))));
  }
  return { kind: 'patch', ops };
}
