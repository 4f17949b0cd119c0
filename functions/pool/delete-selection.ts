/**
 * Which VMs a scale-in or an autoheal deletes (reference §2.3 "delete selection"): of `count`
 * wanted removals, VMs already being deleted count as done; the rest come from the non-deleting
 * VMs in the scale-in sort order, narrowed by the scale-in selectors. Pure.
 *
 * Upstream panics when the VMs already deleting outnumber the removals wanted, or when the
 * selectors leave fewer VMs than the count (Q-P6); here both mean "delete what is available".
 */
import type { VirtualMachine, VirtualMachinePoolSelectionPolicy } from '../../shared/api/index.ts';
import { selectVms, sortPolicyOf, sortVms } from './selection-policy.ts';

export function isDeleting(obj: { metadata?: { deletionTimestamp?: unknown } | undefined }): boolean {
  return obj.metadata?.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

/** The VMs to delete, in deletion order, and whether the sort policy was unknown (a warning upstream). */
export function selectForDeletion(vms: readonly VirtualMachine[], count: number, policy: VirtualMachinePoolSelectionPolicy | undefined, random: () => number): { vms: VirtualMachine[]; unknownSort: boolean } {
  const { sort, unknown } = sortPolicyOf(policy);
  if (count <= 0 || vms.length === 0) return { vms: [], unknownSort: unknown };
  const eligible = vms.filter((vm) => !isDeleting(vm));
  const wanted = Math.min(count, vms.length) - (vms.length - eligible.length);
  if (wanted <= 0 || eligible.length === 0) return { vms: [], unknownSort: unknown };
  const ordered = selectVms(sortVms(eligible, sort, random), policy);
  return { vms: ordered.slice(0, wanted), unknownSort: unknown };
}
