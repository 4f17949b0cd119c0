/**
 * `MigrationRequired` on a Running VMI (reference-vm-vmi-depth §7; KubeVirt's network migration
 * evaluator, `pkg/network/migration/evaluator.go`, and the VMI controller's
 * `syncMigrationRequiredCondition`), pure. Over the interfaces of secondary Multus networks:
 * - a non-`absent` interface missing from `status.interfaces` (a hot-plug not yet seen): an SR-IOV
 *   one needs a migration at once (a new pod gets the device), any other is *pending* — Multus'
 *   dynamic-networks controller may still attach it to the running pod;
 * - an `absent` one that Multus still reports but the domain no longer has: pending;
 * - a network whose pod attachment (by the interface's pod interface name, in the pod's network
 *   status) is another NAD than the spec names (a `networkName` the VM controller changed on a
 *   migratable VMI): at once.
 * At once → `True` reason `AutoMigrationDueToLiveUpdate`; pending → `False`
 * `AutoMigrationPending`, turned `True` once it has been False for more than 15 s (the grace the
 * dynamic-networks controller gets), re-evaluated every 10 s; nothing → the condition removed. An
 * existing True is kept (the workload updater migrates the VMI for it; the target virt-handler
 * removes it), and nothing changes while the VMI migrates.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceStatus } from '../../shared/api/index.ts';
import { VMI_CONDITION } from '../../shared/api/well-known.ts';
import { isMigrating } from '../../shared/api/vmi-eviction.ts';
import { hasInfoSource, INFO_SOURCE_DOMAIN, INFO_SOURCE_MULTUS_STATUS } from '../../shared/network/info-source.ts';
import { isSecondaryMultus } from '../../shared/network/name-scheme.ts';
import { networkStatusesByPodInterface, networkStatusesFromPod } from '../../shared/network/network-status.ts';
import { condition, findCondition, removeCondition, setCondition } from './conditions.ts';

/** The grace a pending hot-plug gets before it asks for a migration. */
export const DYNAMIC_NETWORK_GRACE_MS = 15_000;
/** How soon a pending result is looked at again (nothing else may wake the VMI). */
export const PENDING_REEVALUATION_SECONDS = 10;
export const REASON_DUE_TO_LIVE_UPDATE = 'AutoMigrationDueToLiveUpdate';
export const REASON_PENDING = 'AutoMigrationPending';

type Requirement = 'none' | 'now' | 'pending';

function sameNad(specName: string, podStatusName: string | undefined, namespace: string): boolean {
  if (specName === podStatusName) return true;
  return !specName.includes('/') && `${namespace}/${specName}` === podStatusName;
}

/** What the VMI's secondary interfaces ask for. */
export function networkMigrationRequirement(vmi: VirtualMachineInstance, pod: V1Pod | undefined): Requirement {
  const networks = new Map((vmi.spec.networks ?? []).filter(isSecondaryMultus).map((n) => [n.name, n]));
  const statusByName = new Map((vmi.status?.interfaces ?? []).map((s) => [s.name ?? '', s]));
  const attached = networkStatusesByPodInterface(networkStatusesFromPod(pod));
  for (const iface of vmi.spec.domain.devices.interfaces ?? []) {
    const net = networks.get(iface.name);
    if (!net) continue;
    const status = statusByName.get(iface.name);
    if (iface.state !== 'absent' && !status) return iface.sriov !== undefined ? 'now' : 'pending';
    if (iface.state === 'absent' && status && hasInfoSource(status.infoSource, INFO_SOURCE_MULTUS_STATUS) && !hasInfoSource(status.infoSource, INFO_SOURCE_DOMAIN)) return 'pending';
    const podIface = status?.podInterfaceName;
    if (!podIface) continue;
    const onPod = attached.get(podIface);
    if (onPod && !sameNad(net.multus?.networkName ?? '', onPod.name, vmi.metadata?.namespace ?? '')) return 'now';
  }
  return 'none';
}

/**
 * Sets or removes `MigrationRequired` on `status` (a Running VMI with its launcher pod) as the
 * evaluator decides at `nowIso`. Mutates `status`.
 */
export function syncMigrationRequired(vmi: VirtualMachineInstance, status: VirtualMachineInstanceStatus, pod: V1Pod, nowIso: string): void {
  const nowMs = Date.parse(nowIso);
  if (isMigrating(vmi, nowMs)) return;
  const existing = findCondition(status, VMI_CONDITION.MigrationRequired);
  let result: 'True' | 'False' | 'Unknown';
  switch (networkMigrationRequirement(vmi, pod)) {
    case 'none':
      result = 'Unknown';
      break;
    case 'now':
      result = 'True';
      break;
    case 'pending': {
      const since = existing?.status === 'False' && existing.lastTransitionTime ? Date.parse(String(existing.lastTransitionTime)) : NaN;
      result = nowMs - since > DYNAMIC_NETWORK_GRACE_MS ? 'True' : 'False';
      break;
    }
  }
  if (result === 'Unknown') {
    if (existing) removeCondition(status, VMI_CONDITION.MigrationRequired);
    return;
  }
  if (existing?.status === 'True') return;
  setCondition(status, condition(VMI_CONDITION.MigrationRequired, result, result === 'True' ? REASON_DUE_TO_LIVE_UPDATE : REASON_PENDING, '', nowIso));
}

/** Seconds until the VMI is looked at again: while a migration is pending, the re-evaluation period. */
export function migrationRequiredRequeueSeconds(desired: VirtualMachineInstance): number | undefined {
  const c = desired.status?.conditions?.find((x) => x.type === VMI_CONDITION.MigrationRequired);
  return desired.status?.phase === 'Running' && c?.status === 'False' ? PENDING_REEVALUATION_SECONDS : undefined;
}
