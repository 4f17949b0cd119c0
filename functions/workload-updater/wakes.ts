/**
 * The workload updater's part of the relay (reference node-drain-updates §3.1): every event maps
 * to the one KubeVirt CR's key, known from the KubeVirt events the mapper has seen (none, or more
 * than one CR: nothing is queued, as upstream). KubeVirt events; every migration event; VMI
 * updates only of VMIs that are not final, not migrating, and have a hot-plug or volume change in
 * progress. (Upstream enqueues all of these 5 s later; the reconcile's creation throttle plays that.)
 */
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import type { VirtualMachineInstanceCondition } from '../../shared/api/index.ts';
import { isHotplugInProgress } from '../../shared/liveupdate/hotplug-conditions.ts';
import { KUBEVIRTS, MIGRATIONS, VMIS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

const FINAL = new Set(['Failed', 'Succeeded']);

type Condition = { type?: unknown; status?: unknown };

function changeInProgress(obj: WatchedObject): boolean {
  const conditions = (Array.isArray(obj.status?.conditions) ? obj.status.conditions : []) as Condition[];
  const volumes = conditions.some((c) => c.type === 'VolumesChange' && c.status === 'True');
  return volumes || isHotplugInProgress({ spec: { domain: { devices: {} } }, status: { conditions: conditions as VirtualMachineInstanceCondition[] } });
}

function migrating(obj: WatchedObject): boolean {
  const ms = obj.status?.migrationState as { startTimestamp?: unknown; endTimestamp?: unknown } | undefined;
  return !!ms?.startTimestamp && !ms.endTimestamp;
}

export function workloadUpdaterMapper(): EventMapper {
  const kubevirts = new Set<string>();
  const wake = (): KeyTarget[] => (kubevirts.size === 1 ? [{ controller: 'workload-updater', key: [...kubevirts][0]! }] : []);
  return (kind, type, obj) => {
    switch (kind) {
      case 'KubeVirt': {
        const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
        if (type === 'DELETED') {
          kubevirts.delete(key);
          return kubevirts.size === 0 ? [{ controller: 'workload-updater', key }] : wake();
        }
        kubevirts.add(key);
        return wake();
      }
      case 'VirtualMachineInstanceMigration':
        return wake();
      case 'VirtualMachineInstance': {
        if (type !== 'MODIFIED') return [];
        const phase = typeof obj.status?.phase === 'string' ? obj.status.phase : '';
        return !FINAL.has(phase) && !migrating(obj) && changeInProgress(obj) ? wake() : [];
      }
      default:
        return [];
    }
  };
}

/** What wakes the workload-updater controller's keys. */
export const workloadUpdaterWakes = defineWakes({ controller: 'workload-updater', watches: [{ res: KUBEVIRTS }, { res: MIGRATIONS }, { res: VMIS }], mapper: workloadUpdaterMapper });
