/**
 * The VM controller's expectations (reference.md §e): VMI creations/deletions (`vm-vmis`) and
 * DataVolume creations (`vm-dvs`), per VM key, in the state store, on the shared gate. KubeVirt
 * lowers them from informer events; a stateless function lowers them from what its reads show,
 * and never for its own write without seeing it: a worker whose read lags would otherwise start a
 * second VMI.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { expectationsGate as gate, isPending, type GateResult } from '../../shared/reconcile/expectations-gate.ts';
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

function isDeleting(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.deletionTimestamp !== undefined && vmi.metadata.deletionTimestamp !== null;
}

/** Gates this pass on the VMI and DataVolume records (shared/reconcile/expectations-gate.ts); `reobserve` makes quorum reads. */
export function expectationsGate(key: string, observed: Observed, deps: VmDeps, reobserve: () => Promise<Observed>): Promise<GateResult<Observed>> {
  const e = deps.expectations;
  return gate(
    {
      key,
      scopes: [VMI_EXPECTATIONS, DV_EXPECTATIONS],
      what: 'VM',
      reobserve,
      lower: async (o) => {
        const now = deps.now();
        const vmis = await e.get(VMI_EXPECTATIONS, key);
        if (isPending(vmis, now)) {
          // A terminating VMI is the one we stopped, not the one we created.
          if (vmis.add > 0 && o.vmi && !isDeleting(o.vmi)) await e.creationObserved(VMI_EXPECTATIONS, key);
          for (const k of vmis.deleteKeys) {
            // Gone, replaced by a newer VMI, or terminating: KubeVirt counts a deletionTimestamp as the delete.
            if (!o.vmi || vmiDeletionKey(o.vmi) !== k || isDeleting(o.vmi)) await e.deletionObserved(VMI_EXPECTATIONS, key, k);
          }
        }
        const dvs = await e.get(DV_EXPECTATIONS, key);
        if (isPending(dvs, now) && templateNames(o.vm).every((n) => o.dataVolumes.has(n))) {
          await e.setExpectations(DV_EXPECTATIONS, key, 0, 0, now);
        }
        return (await e.satisfied(VMI_EXPECTATIONS, key, now)) && (await e.satisfied(DV_EXPECTATIONS, key, now));
      },
    },
    observed,
    deps,
  );
}

/** A VMI creation or deletion recorded and not yet seen (printableStatus Starting, Stopping). */
export async function pendingVmiWrites(key: string, deps: VmDeps): Promise<{ readonly creationExpected: boolean; readonly deletionExpected: boolean }> {
  const vmis = await deps.expectations.get(VMI_EXPECTATIONS, key);
  const pending = isPending(vmis, deps.now());
  return { creationExpected: pending && vmis.add > 0, deletionExpected: pending && vmis.del > 0 };
}
