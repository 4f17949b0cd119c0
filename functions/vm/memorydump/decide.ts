/**
 * Memory dumps (KubeVirt's `pkg/storage/memorydump`, reference-vm-vmi-depth §7): what one pass
 * does for `status.memoryDumpRequest`, whose phases go `Associating` → `InProgress` →
 * `Unmounting` → `Completed` (or `Failed`), and `Dissociating` when the request asks for
 * `remove`. The dump volume `{name: <claim>, memoryDump: {claimName, hotpluggable: true}}` is
 * added to the VM template and the running VMI, virt-handler dumps into it (the VMI's volume status
 * goes `MemoryDumpInProgress` → `MemoryDumpCompleted` / `MemoryDumpFailed`), then it is taken out
 * of the VMI again and the claim is annotated with the file name. Pure.
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, Volume } from '../../../shared/api/index.ts';

export const MEMORY_DUMP_ANNOTATION = 'kubevirt.io/memory-dump';
export const MEMORY_DUMP_FAILED = 'Memory dump failed';

export const PHASE = {
  Associating: 'Associating',
  InProgress: 'InProgress',
  Unmounting: 'Unmounting',
  Completed: 'Completed',
  Failed: 'Failed',
  Dissociating: 'Dissociating',
} as const;

export interface MemoryDumpPlan {
  /** The template's new volume list, when it changes. */
  readonly templateVolumes?: Volume[];
  /** The VMI's new volume list, when it changes. */
  readonly vmiVolumes?: Volume[];
  /** `kubevirt.io/memory-dump` to put on the claim. */
  readonly annotate?: { readonly claimName: string; readonly value: string };
  /** The request after this pass (undefined: dropped). */
  readonly request: VirtualMachineMemoryDumpRequest | undefined;
}

/** The dump volume of a claim. */
export function dumpVolume(claimName: string): Volume {
  return { name: claimName, memoryDump: { claimName, hotpluggable: true } };
}

/** Phases in which the dump volume belongs in the VMI (a new VMI gets it only then). */
export function dumpVolumeWanted(request: VirtualMachineMemoryDumpRequest | undefined): boolean {
  return request?.phase === PHASE.Associating || request?.phase === PHASE.InProgress;
}

/** This pass's plan, or undefined when there is no request. */
export function planMemoryDump(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): MemoryDumpPlan | undefined {
  const request = vm.status?.memoryDumpRequest;
  if (!request) return undefined;
  const claim = request.claimName;
  const template = vm.spec.template.spec?.volumes ?? [];
  const vmiVolumes = vmi?.spec.volumes ?? [];
  const inTemplate = template.some((v) => v.name === claim);
  const inVmi = vmiVolumes.some((v) => v.name === claim);
  const status = vmi?.status?.volumeStatus?.find((s) => s.name === claim);
  const live = vmi !== undefined && !vmi.metadata?.deletionTimestamp;
  const running = live && vmi.status?.phase === 'Running';
  const without = (list: Volume[]) => list.filter((v) => v.name !== claim);
  let next: VirtualMachineMemoryDumpRequest = request.remove && request.phase !== PHASE.Dissociating ? { ...request, phase: PHASE.Dissociating } : request;

  switch (next.phase) {
    case PHASE.Associating: {
      if (!running) return { request: next };
      return {
        ...(inTemplate ? {} : { templateVolumes: [...template, dumpVolume(claim)] }),
        ...(inVmi ? {} : { vmiVolumes: [...vmiVolumes, dumpVolume(claim)] }),
        // The template has it once this pass's update lands.
        request: { ...next, phase: PHASE.InProgress },
      };
    }
    case PHASE.InProgress: {
      const dump = status?.memoryDumpVolume;
      if (dump?.startTimestamp !== undefined && next.startTimestamp === undefined) next = { ...next, startTimestamp: dump.startTimestamp };
      if (status?.phase === 'MemoryDumpCompleted') {
        next = { ...next, phase: PHASE.Unmounting, ...(dump?.endTimestamp !== undefined ? { endTimestamp: dump.endTimestamp } : {}), ...(dump?.targetFileName !== undefined ? { fileName: dump.targetFileName } : {}) };
      } else if (status?.phase === 'MemoryDumpFailed') {
        next = { ...next, phase: PHASE.Failed, ...(status.message !== undefined ? { message: status.message } : {}), ...(dump?.endTimestamp !== undefined ? { endTimestamp: dump.endTimestamp } : {}) };
      }
      return { request: next };
    }
    case PHASE.Unmounting:
    case PHASE.Failed: {
      const value = next.phase === PHASE.Failed ? MEMORY_DUMP_FAILED : (next.fileName ?? '');
      const done = next.phase === PHASE.Unmounting && !inVmi && status === undefined;
      return {
        annotate: { claimName: claim, value },
        ...(inVmi && live ? { vmiVolumes: without(vmiVolumes) } : {}),
        request: done ? { ...next, phase: PHASE.Completed } : next,
      };
    }
    case PHASE.Dissociating: {
      const gone = !inTemplate && !(live && (inVmi || status !== undefined));
      return {
        ...(inTemplate ? { templateVolumes: without(template) } : {}),
        ...(inVmi && live ? { vmiVolumes: without(vmiVolumes) } : {}),
        request: gone ? undefined : next,
      };
    }
    default:
      return { request: next };
  }
}
