/**
 * What wakes the migration controller's keys (reference.md §d.1): the migration's own events;
 * its VMI's (every migration of that VMI); its target pods (by the migration-UID label) and its
 * VMI's pods; a change of the KubeVirt CR (limits and timeouts come from there: every unfinished
 * migration looks again); when a migration gives its parallel-limit slot back, the waiting
 * migrations that can use it (wake-waiting.ts); and a ResourceQuota changed or deleted in a
 * namespace: its migrations whose target pod the quota refused (`migrationRejectedByResourceQuota`),
 * as KubeVirt's quota handlers do.
 */
import { KUBEVIRTS, MIGRATIONS, PODS, RESOURCE_QUOTAS, VMIS } from '../../shared/api/resources.ts';
import { MIGRATION_JOB_UID_LABEL, MIGRATION_REJECTED_BY_QUOTA_CONDITION, vmiPodsSelector } from '../../shared/api/well-known.ts';
import { hasReleasedSlot, isMigrationWaiting, migrationPriority } from '../../shared/predicates/migrations.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';
import { KeyIndex } from '../../shared/relay/key-index.ts';
import { PodOwners } from '../../shared/relay/pod-owners.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { LAUNCHER_PODS, type EventMapper, type EventType, type KeyTarget, type WatchedObject } from '../../shared/relay/route.ts';
import type { ViewRead, ViewSource } from '../../shared/relay/view.ts';
import { pickWaitingToWake } from './wake-waiting.ts';

const FINAL_MIGRATION = new Set(['Succeeded', 'Failed']);

/** The migration mapper's indexes. */
class MigrationIndexes {
  /** `ns/vmiName` → migration keys for that VMI. */
  readonly vmiMigrations = new KeyIndex();
  /** migration uid → migration key (target pods carry the migration's UID). */
  readonly migrationByUid = new Map<string, string>();
  /** Migration keys not yet finished (re-enqueued when the cluster config changes). */
  readonly activeMigrations = new Set<string>();
  /**
   * Migrations waiting for a parallel-limit slot (no phase yet or Pending, not deleting), least
   * recently woken first: woken when a migration gives its slot back (wake-waiting.ts).
   */
  readonly waitingMigrations = new Map<string, { readonly priority: number; readonly vmi: string }>();
  /**
   * Migrations that may still hold a slot: seen not final, or final with the finalizer still on
   * (the reconcile gives the slot back just before it removes it). Leaving this set wakes waiters.
   */
  readonly unreleasedMigrations = new Set<string>();
  /** VMI key → `status.nodeName` (a waiting migration's source node). */
  readonly vmiNodes = new Map<string, string>();
  readonly pods = new PodOwners();
  /** namespace → keys of its migrations carrying `migrationRejectedByResourceQuota`. */
  readonly quotaRejected = new Map<string, Set<string>>();
}

function hasQuotaRejection(obj: WatchedObject): boolean {
  const conditions = obj.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => (c as { type?: unknown }).type === MIGRATION_REJECTED_BY_QUOTA_CONDITION);
}

export function migrationMapper(): EventMapper {
  const idx = new MigrationIndexes();
  const wake = (key: string): KeyTarget => ({ controller: 'migration', key });
  return (kind, type, obj) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    const deleted = type === 'DELETED';
    switch (kind) {
      case 'VirtualMachineInstance': {
        const node = typeof obj.status?.nodeName === 'string' && obj.status.nodeName !== '' ? obj.status.nodeName : undefined;
        if (!deleted && node) idx.vmiNodes.set(key, node);
        else idx.vmiNodes.delete(key);
        return idx.vmiMigrations.get(key).map(wake);
      }
      case 'VirtualMachineInstanceMigration': {
        const vmiName = typeof obj.spec?.vmiName === 'string' ? obj.spec.vmiName : '';
        const uid = obj.metadata?.uid;
        const phase = typeof obj.status?.phase === 'string' ? obj.status.phase : '';
        const rejected = idx.quotaRejected.get(ns) ?? new Set<string>();
        if (!deleted && hasQuotaRejection(obj)) idx.quotaRejected.set(ns, rejected.add(key));
        else if (rejected.delete(key) && rejected.size === 0) idx.quotaRejected.delete(ns);
        if (deleted) {
          idx.vmiMigrations.delete(key);
          if (uid) idx.migrationByUid.delete(uid);
          idx.activeMigrations.delete(key);
          idx.waitingMigrations.delete(key);
        } else {
          idx.vmiMigrations.set(key, vmiName ? [`${ns}/${vmiName}`] : []);
          if (uid) idx.migrationByUid.set(uid, key);
          if (FINAL_MIGRATION.has(phase)) idx.activeMigrations.delete(key);
          else idx.activeMigrations.add(key);
          // An entry keeps its place in the wake order while the migration waits.
          if (isMigrationWaiting(obj)) idx.waitingMigrations.set(key, { priority: migrationPriority(obj.spec?.priority), vmi: `${ns}/${vmiName}` });
          else idx.waitingMigrations.delete(key);
        }
        return [wake(key), ...wakeWaiting(key, type, obj, idx).map(wake)];
      }
      case 'Pod': {
        const vmiKey = idx.pods.observe(obj, deleted);
        const migrationUid = obj.metadata?.labels?.[MIGRATION_JOB_UID_LABEL];
        const migrationKey = migrationUid ? idx.migrationByUid.get(migrationUid) : undefined;
        if (migrationKey) return [wake(migrationKey)];
        return vmiKey ? idx.vmiMigrations.get(vmiKey).map(wake) : [];
      }
      case 'ResourceQuota':
        // KubeVirt handles a quota's update and deletion only: a new quota frees nothing.
        return type === 'ADDED' ? [] : [...(idx.quotaRejected.get(ns) ?? [])].map(wake);
      case 'KubeVirt':
        // Migration limits and timeouts come from here: every unfinished migration looks again.
        return [...idx.activeMigrations].map(wake);
      default:
        return [];
    }
  };
}

/**
 * The waiting migrations to wake when this event shows a migration giving its slot back: seen
 * final without its finalizer (the reconcile releases its leases just before it removes it) or
 * deleted, after it was seen holding one. A released migration seen for the first time (ADDED:
 * the relay's first list, or one that finished while the watch was down) wakes too, as a wake
 * may have been missed; one already seen released (its deletion, a relist) wakes nothing again.
 */
function wakeWaiting(key: string, type: EventType, obj: WatchedObject, idx: MigrationIndexes): string[] {
  const released = type === 'DELETED' || hasReleasedSlot(obj);
  const wasHolding = idx.unreleasedMigrations.has(key);
  if (!released) {
    idx.unreleasedMigrations.add(key);
    return [];
  }
  idx.unreleasedMigrations.delete(key);
  if (!wasHolding && type !== 'ADDED') return [];
  if (idx.waitingMigrations.size === 0) return [];
  const state = obj.status?.migrationState as { sourceNode?: unknown } | undefined;
  const vmiName = typeof obj.spec?.vmiName === 'string' ? obj.spec.vmiName : '';
  const sourceNode = typeof state?.sourceNode === 'string' && state.sourceNode !== '' ? state.sourceNode : idx.vmiNodes.get(`${obj.metadata?.namespace ?? ''}/${vmiName}`);
  const waiting = [...idx.waitingMigrations].map(([k, w]) => [k, { priority: w.priority, node: idx.vmiNodes.get(w.vmi) }] as const);
  const keys = pickWaitingToWake(waiting, sourceNode);
  for (const k of keys) {
    // To the back of the order: the next freed slot wakes another one.
    const w = idx.waitingMigrations.get(k)!;
    idx.waitingMigrations.delete(k);
    idx.waitingMigrations.set(k, w);
  }
  return keys;
}

/**
 * What a migration key's message carries (shared/relay/view.ts): the reads every pass starts with
 * (reconcile.ts): the migration, its VMI and the VMI's pods — the source pod and the target pod.
 * A drain's migration is reconciled a dozen times and more as its phases move on, each pass
 * reading the three anew; KubeVirt answers them from its informers. An empty pod list is no
 * answer (the VMI of a migration has its source pod): the reconcile reads it from the API server.
 */
function migrationViewReads(key: string, source: ViewSource): ViewRead[] {
  const { namespace, name } = splitKey(key);
  const vmiName = source.get(MIGRATIONS, namespace, name)?.spec?.vmiName;
  if (typeof vmiName !== 'string' || vmiName === '') return [{ resource: MIGRATIONS, namespace, name }];
  const uid = source.get(VMIS, namespace, vmiName)?.metadata?.uid;
  return [
    { resource: MIGRATIONS, namespace, name },
    { resource: VMIS, namespace, name: vmiName },
    ...(uid ? [{ resource: PODS, namespace, labelSelector: vmiPodsSelector(uid) }] : []),
  ];
}

/** What wakes the migration controller's keys, and what their messages carry. */
export const migrationWakes = defineWakes({
  controller: 'migration',
  watches: [{ res: MIGRATIONS }, { res: VMIS }, LAUNCHER_PODS, { res: KUBEVIRTS }, { res: RESOURCE_QUOTAS }],
  mapper: migrationMapper,
  view: { resources: [MIGRATIONS, VMIS, PODS], reads: migrationViewReads },
});
