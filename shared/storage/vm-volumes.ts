/**
 * The claims behind a VirtualMachine's volumes, as the storage controllers see them: a
 * DataVolume volume's claim is named after the DataVolume, a PVC or MemoryDump volume names its
 * claim; the backend-storage claim (persistent TPM or EFI, or CBT enabled) is listed by label
 * `persistent-state-for=<vm>` and shows up as the volume `GetName("persistent-state-for", vm, 63)`.
 */
import { BACKEND_PVC_LABEL as BACKEND_LABEL } from './backend-storage.ts';
import { getName } from './get-name.ts';

export { BACKEND_LABEL };

export interface VolumeLike {
  name: string;
  persistentVolumeClaim?: { claimName?: string };
  dataVolume?: { name?: string };
  memoryDump?: { claimName?: string };
  [source: string]: unknown;
}

export interface VmLike {
  metadata?: { name?: string };
  spec?: {
    template?: { spec?: { volumes?: VolumeLike[]; domain?: { devices?: { tpm?: { persistent?: boolean } }; firmware?: { bootloader?: { efi?: { persistent?: boolean } } } } } };
  };
  status?: { changedBlockTracking?: { state?: string } };
}


/** The backend-storage volume's name for VM `vmName`. */
export const backendVolumeName = (vmName: string) => getName(BACKEND_LABEL, vmName, 63);

/** The claim a volume uses, if it is a PVC, DataVolume or MemoryDump volume. */
export function claimOfVolume(v: Pick<VolumeLike, 'persistentVolumeClaim' | 'dataVolume' | 'memoryDump'>): string | undefined {
  return v.dataVolume?.name ?? v.persistentVolumeClaim?.claimName ?? v.memoryDump?.claimName ?? undefined;
}

/** True for the volume kinds a snapshot can take (PVC, DataVolume, MemoryDump). */
export const isSnapshotable = (v: VolumeLike) => v.persistentVolumeClaim !== undefined || v.dataVolume !== undefined || v.memoryDump !== undefined;

/** True when the VM keeps state in a backend PVC: a persistent TPM, a persistent EFI, or CBT. */
export function needsBackendStorage(vm: VmLike): boolean {
  const t = vm.spec?.template?.spec?.domain;
  return t?.devices?.tpm?.persistent === true || t?.firmware?.bootloader?.efi?.persistent === true || (vm.status?.changedBlockTracking?.state ?? '') === 'Enabled';
}

/** (volume name, claim name) for every claim-backed volume of the VM, in volume order, then the backend claim. */
export function vmClaims(vm: VmLike, backendClaim: string | undefined): { volumeName: string; claimName: string }[] {
  const out: { volumeName: string; claimName: string }[] = [];
  for (const v of vm.spec?.template?.spec?.volumes ?? []) {
    const claim = claimOfVolume(v);
    if (claim) out.push({ volumeName: v.name, claimName: claim });
  }
  if (backendClaim) out.push({ volumeName: backendVolumeName(vm.metadata?.name ?? ''), claimName: backendClaim });
  return out;
}
