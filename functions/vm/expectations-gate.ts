/**
 * The VM controller's expectations (reference.md §e): VMI creations/deletions (`vm-vmis`) and
 * DataVolume creations (`vm-dvs`), per VM key, in the state store. KubeVirt lowers them from
 * informer events; a stateless function lowers them from what its reads show, and never for its
 * own write without seeing it: a worker whose read lags would otherwise start a second VMI.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { EXPECTATIONS_TIMEOUT_MS, isExpectationExpired, type ExpectationRecord } from '../../shared/state/port.ts';
import { DV_EXPECTATIONS, VMI_EXPECTATIONS, type VmDeps } from './deps.ts';
import { templateNames } from './data-volumes.ts';
import type { Observed } from './sync.ts';

/**
 * The key a VMI deletion is tracked by: `namespace/name/uid`. KubeVirt uses `namespace/name`, which
 * an informer never confuses; from a read, the next VMI of the same name must not count as the old
 * one still being there, so the UID is part of the key.
 */
export function vmiDeletionKey(vmi: VirtualMachineInstance): string {
  return `${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}/${vmi.metadata?.uid ?? ''}`;
}

export interface GateResult {
  /** The observation to act on (a quorum re-read when the first one left doubt). */
  readonly observed: Observed;
  readonly satisfied: boolean;
  /** A VMI creation is recorded and not yet seen (printableStatus Starting). */
  readonly creationExpected: boolean;
  /** A VMI deletion is recorded and not yet seen (printableStatus Stopping). */
  readonly deletionExpected: boolean;
  /** When unsatisfied: seconds until the record may be taken over. */
  readonly waitSeconds: number;
}

function isDeleting(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.deletionTimestamp !== undefined && vmi.metadata.deletionTimestamp !== null;
}

function pending(r: ExpectationRecord | undefined, now: number): r is ExpectationRecord {
  return r !== undefined && !isExpectationExpired(r, now) && (r.add > 0 || r.del > 0);
}

/** Lowers what `o` shows was done; true when both scopes are satisfied. */
async function lower(key: string, o: Observed, deps: VmDeps, now: number): Promise<boolean> {
  const e = deps.expectations;
  const vmis = await e.get(VMI_EXPECTATIONS, key);
  if (pending(vmis, now)) {
    // A terminating VMI is the one we stopped, not the one we created.
    if (vmis.add > 0 && o.vmi && !isDeleting(o.vmi)) await e.creationObserved(VMI_EXPECTATIONS, key);
    for (const k of vmis.deleteKeys) {
      // Gone, replaced by a newer VMI, or terminating: KubeVirt counts a deletionTimestamp as the delete.
      if (!o.vmi || vmiDeletionKey(o.vmi) !== k || isDeleting(o.vmi)) await e.deletionObserved(VMI_EXPECTATIONS, key, k);
    }
  }
  const dvs = await e.get(DV_EXPECTATIONS, key);
  if (pending(dvs, now) && templateNames(o.vm).every((n) => o.dataVolumes.has(n))) {
    await e.setExpectations(DV_EXPECTATIONS, key, 0, 0, now);
  }
  return (await e.satisfied(VMI_EXPECTATIONS, key, now)) && (await e.satisfied(DV_EXPECTATIONS, key, now));
}

/** Gates this pass on the expectations; `reobserve` makes quorum reads. */
export async function expectationsGate(key: string, observed: Observed, deps: VmDeps, reobserve: () => Promise<Observed>): Promise<GateResult> {
  const now = deps.now();
  const e = deps.expectations;
  let o = observed;
  let satisfied = await lower(key, o, deps, now);
  if (!satisfied) {
    // The read may have been served from a lagging cache: one quorum read settles it.
    o = await reobserve();
    satisfied = await lower(key, o, deps, now);
  }
  let waitSeconds = 0;
  if (!satisfied) {
    const takeoverMs = deps.takeoverMs ?? EXPECTATIONS_TIMEOUT_MS;
    const records = [await e.get(VMI_EXPECTATIONS, key), await e.get(DV_EXPECTATIONS, key)].filter((r) => pending(r, now));
    const setAt = records.length > 0 ? Math.max(...records.map((r) => r.setAt)) : 0;
    if (now - setAt >= takeoverMs) {
      deps.log.warn('taking over an expectation that was never observed', { key, setAt });
      await e.delete(VMI_EXPECTATIONS, key);
      await e.delete(DV_EXPECTATIONS, key);
      satisfied = true;
    } else {
      waitSeconds = Math.max(1, Math.ceil((setAt + takeoverMs - now) / 1000));
    }
  }
  const vmis = await e.get(VMI_EXPECTATIONS, key);
  return {
    observed: o,
    satisfied,
    creationExpected: pending(vmis, now) && vmis.add > 0,
    deletionExpected: pending(vmis, now) && vmis.del > 0,
    waitSeconds,
  };
}
