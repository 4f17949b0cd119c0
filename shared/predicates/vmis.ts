/** Pure questions about VMIs that several controllers ask (replica sets, pools, VMs). */
import type { VirtualMachineInstance } from '../api/index.ts';

/** Phase `Succeeded` or `Failed`. */
export function isVmiFinal(vmi: VirtualMachineInstance): boolean {
  return vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed';
}

/** Has a deletionTimestamp. */
export function isVmiDeleting(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.deletionTimestamp !== undefined && vmi.metadata.deletionTimestamp !== null;
}

/** The `Ready` condition's status, if the VMI has one. */
export function vmiReadyStatus(vmi: VirtualMachineInstance): { status: string; reason?: string | undefined } | undefined {
  return vmi.status?.conditions?.find((c) => c.type === 'Ready');
}

/** `Ready` is `True`. */
export function isVmiReady(vmi: VirtualMachineInstance): boolean {
  return vmiReadyStatus(vmi)?.status === 'True';
}

/** Not final, not deleting, and `Ready=False` with reason `PodTerminating`: its pod is going away (state unknown). */
export function isVmiUnknown(vmi: VirtualMachineInstance): boolean {
  const ready = vmiReadyStatus(vmi);
  return !isVmiFinal(vmi) && !isVmiDeleting(vmi) && ready?.status === 'False' && ready.reason === 'PodTerminating';
}
