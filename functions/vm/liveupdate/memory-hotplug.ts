/**
 * Memory hotplug (KubeVirt's `handleMemoryHotplugRequest`, reference-vm-vmi-depth §5): a raised
 * `memory.guest` in the template patches the VMI's guest memory and its memory request/limit; the
 * VMI controller then marks it `HotMemoryChange` and the workload updater migrates it. The checks
 * in KubeVirt's order. Pure.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { isMigratable, isMigrating } from '../../../shared/api/vmi-eviction.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import { memoryChangeStatus } from '../../../shared/liveupdate/hotplug-conditions.ts';
import { liveUpdateMemoryProblem } from '../../../shared/liveupdate/memory.ts';
import { addQuantity, compareQuantity, formatQuantity, parseQuantity, subQuantity, type Quantity } from '../../../shared/api/quantity.ts';
import { NONE, refuse, restart, testReplace, type LiveChange } from './change.ts';

export interface MemoryInput {
  /** The VM template spec, instance type and preference expanded. */
  readonly template: VirtualMachineInstanceSpec;
  readonly vmi: VirtualMachineInstance;
  /** Epoch ms (is the VMI migrating?). */
  readonly now: number;
  /** The cluster's default architecture (an unset `spec.architecture`). */
  readonly defaultArchitecture: string;
}

const binary = (q: Quantity): Quantity => ({ nanos: q.nanos, format: 'BinarySI' });
const q = (v: string | number, field: string) => parseQuantity(v, field);

/** What the memory handler does for this pass. */
export function memoryChange({ template, vmi, now, defaultArchitecture }: MemoryInput): LiveChange {
  const wantRaw = template.domain.memory?.guest;
  const haveRaw = vmi.spec.domain.memory?.guest;
  const currentRaw = vmi.status?.memory?.guestCurrent;
  if (vmi.metadata?.deletionTimestamp || wantRaw === undefined || haveRaw === undefined || currentRaw === undefined) return NONE;
  if (memoryChangeStatus(vmi) === 'False') return restart('memory updated in template spec. Memory-hotplug failed and is not available for this VM configuration');
  const want = q(wantRaw, 'spec.template.spec.domain.memory.guest');
  if (compareQuantity(want, q(haveRaw, 'spec.domain.memory.guest')) === 0) return NONE;
  if (!isMigratable(vmi)) return restart('memory updated in template spec. Memory-hotplug is only available for migratable VMs');
  const maxGuest = vmi.spec.domain.memory?.maxGuest;
  if (maxGuest === undefined) return restart('memory updated in template spec. Memory-hotplug is not available for this VM configuration');
  if (memoryChangeStatus(vmi) === 'True') return refuse('another memory hotplug is in progress');
  if (isMigrating(vmi, now)) return refuse('memory hotplug is not allowed while VMI is migrating');
  const problem = liveUpdateMemoryProblem(template, maxGuest, defaultArchitecture);
  if (problem !== undefined) return restart(`memory hotplug not supported, ${problem}`);
  const atBoot = vmi.status?.memory?.guestAtBoot;
  if (atBoot !== undefined && compareQuantity(want, q(atBoot, 'status.memory.guestAtBoot')) < 0) return restart('memory updated in template spec to a value lower than what the VM started with');
  if (compareQuantity(want, q(maxGuest, 'spec.domain.memory.maxGuest')) > 0) return restart("memory updated in template spec to a value higher than what's available");

  const ops: JsonPatchOperation[] = testReplace('/spec/domain/memory/guest', haveRaw, wantRaw);
  let delta = binary(subQuantity(want, q(currentRaw, 'status.memory.guestCurrent')));
  const requestRaw = vmi.spec.domain.resources?.requests?.['memory'];
  if (requestRaw !== undefined) {
    let request = binary(addQuantity(q(requestRaw, 'spec.domain.resources.requests.memory'), delta));
    // After hot-unplugs not all memory may have come back: the request is at least the new guest,
    // and the limit's delta follows the request actually set.
    if (compareQuantity(request, want) < 0) {
      request = binary(want);
      delta = binary(subQuantity(want, request));
    }
    ops.push(...testReplace('/spec/domain/resources/requests/memory', requestRaw, formatQuantity(request)));
  }
  if (template.domain.resources?.limits?.['memory'] !== undefined) {
    const limitRaw = vmi.spec.domain.resources?.limits?.['memory'];
    const base = limitRaw === undefined ? binary({ nanos: 0n, format: 'BinarySI' }) : q(limitRaw, 'spec.domain.resources.limits.memory');
    ops.push(...testReplace('/spec/domain/resources/limits/memory', limitRaw, formatQuantity(binary(addQuantity(base, delta)))));
  }
  return { kind: 'patch', ops };
}
