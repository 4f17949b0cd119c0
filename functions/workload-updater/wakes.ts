/**
 * The workload updater's part of the relay (reference node-drain-updates §3.1): every event maps
 * to the one KubeVirt CR's key, known from the KubeVirt events the mapper has seen (none, or more
 * than one CR: nothing is queued, as upstream). KubeVirt events; a migration's add, delete or
 * relist, and its updates that change what a pass reads (below); VMI updates only of VMIs that
 * are not final, not migrating, and have a hot-plug or volume change in progress. (Upstream
 * enqueues all of these 5 s later; the reconcile's creation throttle plays that.)
 *
 * A migration's update wakes the key only when it changes what a pass reads of migrations
 * (classify.ts): whether it is final, whether it counts as running against the cluster's budget,
 * its VMI, and whether it is a workload-update migration. Upstream's 5 s delay folds a drain's
 * dozens of migration phase changes into few passes; an SQS FIFO queue has no per-message delay,
 * so without this filter every one of them was a pass listing every VMI and migration. The relay
 * hands the mapper the previous object as a metadata stub, so the mapper remembers those facts
 * (a short string per migration).
 */
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import type { VirtualMachineInstanceCondition, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isHotplugInProgress } from '../../shared/liveupdate/hotplug-conditions.ts';
import { KUBEVIRTS, MIGRATIONS, VMIS } from '../../shared/api/resources.ts';
import { WORKLOAD_UPDATE_MIGRATION_ANNOTATION, isFinalMigration, isRunningMigration } from '../../shared/api/vmi-eviction.ts';
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

/** What a pass reads of a migration. */
function migrationFacts(obj: WatchedObject): string {
  const m = obj as VirtualMachineInstanceMigration;
  return JSON.stringify([isFinalMigration(m), isRunningMigration(m), m.spec?.vmiName, m.metadata?.annotations?.[WORKLOAD_UPDATE_MIGRATION_ANNOTATION] !== undefined]);
}

export function workloadUpdaterMapper(): EventMapper {
  const kubevirts = new Set<string>();
  /** `ns/name` of each migration → its facts as last seen. */
  const migrations = new Map<string, string>();
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
      case 'VirtualMachineInstanceMigration': {
        const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
        const facts = migrationFacts(obj);
        const before = migrations.get(key);
        if (type === 'DELETED') migrations.delete(key);
        else migrations.set(key, facts);
        return type === 'MODIFIED' && before === facts ? [] : wake();
      }
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
