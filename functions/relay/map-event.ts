/**
 * Maps a watch event to the keys of the VMI, VM and migration controllers (reference.md §a.1,
 * §c, §d.1): the controller-runtime "handlers only map events to keys" rule. Pure apart from the
 * indexes it maintains. The three share one mapper because they share its indexes (a VMI's
 * claims, a migration's VMI); other controllers bring their own (functions/registry.ts).
 */
import {
  KIND_VM,
  KIND_VMI,
  MIGRATION_JOB_UID_LABEL,
  OWNER_VMI_NAME_ANNOTATION,
  SKIP_BACKUP_HOOKS_ANNOTATION,
} from '../../shared/api/well-known.ts';
import { hasReleasedSlot, isMigrationWaiting, migrationPriority } from '../../shared/predicates/migrations.ts';
import type { RelayIndexes } from './indexes.ts';
import { pickWaitingToWake } from './migration-wake.ts';
import { controllerRefName, type EventMapper, type EventType, type KeyTarget, type WatchedKind, type WatchedObject } from '../../shared/relay/route.ts';
import { RelayIndexes as Indexes } from './indexes.ts';

export type { EventType, KeyTarget, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';

/** The VMI/VM/migration mapper with its own indexes (the factory the three routes share). */
export function coreMapper(): EventMapper {
  const idx = new Indexes();
  return (kind, type, obj, old) => mapEvent(kind, type, obj, idx, old);
}

const FINAL_MIGRATION = new Set(['Succeeded', 'Failed']);

/** The keys `obj`'s event affects; updates `idx` as it goes. `old` is the previous object, if known. */
export function mapEvent(kind: WatchedKind, type: EventType, obj: WatchedObject, idx: RelayIndexes, old?: WatchedObject): KeyTarget[] {
  const ns = obj.metadata?.namespace ?? '';
  const name = obj.metadata?.name ?? '';
  const key = `${ns}/${name}`;
  const deleted = type === 'DELETED';
  switch (kind) {
    case 'VirtualMachineInstance': {
      const node = typeof obj.status?.nodeName === 'string' && obj.status.nodeName !== '' ? obj.status.nodeName : undefined;
      if (deleted) {
        idx.vmiClaims.delete(key);
        idx.vmis.delete(key);
        idx.vmiNodes.delete(key);
      } else {
        idx.vmiClaims.set(key, claimsOf(ns, obj.spec?.volumes));
        idx.vmis.add(key);
        if (node) idx.vmiNodes.set(key, node);
        else idx.vmiNodes.delete(key);
      }
      const out: KeyTarget[] = [{ controller: 'vmi', key }];
      const vm = controllerRef(obj, KIND_VM);
      // A VMI wakes its VM by controller reference. An orphan wakes the VM of the same name (which
      // may adopt it) only if one exists: otherwise every standalone VMI would cost the VM
      // controller a read per event. A VM created later is reconciled on its own ADDED event.
      if (vm) out.push({ controller: 'vm', key: `${ns}/${vm}` });
      else if (idx.vms.has(key)) out.push({ controller: 'vm', key });
      for (const m of idx.vmiMigrations.get(key)) out.push({ controller: 'migration', key: m });
      return out;
    }
    case 'VirtualMachine': {
      if (deleted) {
        idx.vmClaims.delete(key);
        idx.vms.delete(key);
      } else {
        idx.vmClaims.set(key, vmClaims(ns, obj.spec));
        idx.vms.add(key);
      }
      return [{ controller: 'vm', key }];
    }
    case 'VirtualMachineInstanceMigration': {
      const vmiName = typeof obj.spec?.vmiName === 'string' ? obj.spec.vmiName : '';
      const uid = obj.metadata?.uid;
      const phase = typeof obj.status?.phase === 'string' ? obj.status.phase : '';
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
      const out: KeyTarget[] = [{ controller: 'migration', key }];
      // The VMI controller refuses to create a pod while a migration runs: wake it when one ends.
      if (vmiName) out.push({ controller: 'vmi', key: `${ns}/${vmiName}` });
      out.push(...wakeWaiting(key, type, obj, idx));
      return out;
    }
    case 'Pod':
      return mapPod(obj, idx, deleted, old);
    case 'PersistentVolumeClaim':
    case 'DataVolume': {
      const term = key;
      // A backend-storage PVC (persistent TPM/EFI) names its VMI by label, as KubeVirt's PVC handler reads it.
      const backendFor = kind === 'PersistentVolumeClaim' ? obj.metadata?.labels?.['persistent-state-for'] : undefined;
      return [
        ...idx.vmiClaims.get(term).map((k) => ({ controller: 'vmi' as const, key: k })),
        ...idx.vmClaims.get(term).map((k) => ({ controller: 'vm' as const, key: k })),
        ...(backendFor ? [{ controller: 'vmi' as const, key: `${ns}/${backendFor}` }] : []),
      ];
    }
    case 'KubeVirt': {
      // Migration limits and timeouts come from here: every unfinished migration looks again.
      const out: KeyTarget[] = [...idx.activeMigrations].map((k) => ({ controller: 'migration' as const, key: k }));
      const before = old?.metadata?.annotations?.[SKIP_BACKUP_HOOKS_ANNOTATION];
      const after = obj.metadata?.annotations?.[SKIP_BACKUP_HOOKS_ANNOTATION];
      // A change seen on a relist (the watch was down when it happened) counts as well; with no
      // previous object (the first list) there is nothing to compare and every VMI is listed anyway.
      if ((type === 'MODIFIED' || type === 'RELIST') && old !== undefined && before !== after) out.push(...[...idx.vmis].map((k) => ({ controller: 'vmi' as const, key: k })));
      return out;
    }
    default:
      return [];
  }
}

/**
 * The waiting migrations to wake when this event shows a migration giving its slot back: seen
 * final without its finalizer (the reconcile releases its leases just before it removes it) or
 * deleted, after it was seen holding one. A released migration seen for the first time (ADDED:
 * the relay's first list, or one that finished while the watch was down) wakes too, as a wake
 * may have been missed; one already seen released (its deletion, a relist) wakes nothing again.
 */
function wakeWaiting(key: string, type: EventType, obj: WatchedObject, idx: RelayIndexes): KeyTarget[] {
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
  return keys.map((k) => ({ controller: 'migration' as const, key: k }));
}

function mapPod(obj: WatchedObject, idx: RelayIndexes, deleted: boolean, old?: WatchedObject): KeyTarget[] {
  const ns = obj.metadata?.namespace ?? '';
  const uid = obj.metadata?.uid ?? '';
  let vmiKey: string | undefined;
  const vmi = controllerRef(obj, KIND_VMI);
  if (vmi) vmiKey = `${ns}/${vmi}`;
  else {
    // An attachment pod's controller is the launcher pod: follow it to the VMI.
    const podRef = obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'Pod');
    if (podRef?.uid) vmiKey = idx.podOwner.get(podRef.uid);
    // Orphaned (owner reference removed): the owner annotations still name the VMI.
    const annotated = obj.metadata?.annotations?.[OWNER_VMI_NAME_ANNOTATION];
    if (!vmiKey && annotated) vmiKey = `${ns}/${annotated}`;
  }
  if (deleted) idx.podOwner.delete(uid);
  else if (vmiKey && uid) idx.podOwner.set(uid, vmiKey);

  const out: KeyTarget[] = [];
  if (vmiKey) out.push({ controller: 'vmi', key: vmiKey });
  // The old owner, too, when the controller reference changed.
  const oldVmi = old ? controllerRef(old, KIND_VMI) : undefined;
  if (oldVmi && `${ns}/${oldVmi}` !== vmiKey) out.push({ controller: 'vmi', key: `${ns}/${oldVmi}` });
  const migrationUid = obj.metadata?.labels?.[MIGRATION_JOB_UID_LABEL];
  const migrationKey = migrationUid ? idx.migrationByUid.get(migrationUid) : undefined;
  if (migrationKey) out.push({ controller: 'migration', key: migrationKey });
  else if (vmiKey) for (const m of idx.vmiMigrations.get(vmiKey)) out.push({ controller: 'migration', key: m });
  return out;
}

const controllerRef = controllerRefName;

interface VolumeLike {
  persistentVolumeClaim?: { claimName?: string };
  dataVolume?: { name?: string };
}

function claimsOf(ns: string, volumes: unknown): string[] {
  if (!Array.isArray(volumes)) return [];
  const out: string[] = [];
  for (const v of volumes as VolumeLike[]) {
    if (v.persistentVolumeClaim?.claimName) out.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    if (v.dataVolume?.name) out.push(`${ns}/${v.dataVolume.name}`);
  }
  return out;
}

function vmClaims(ns: string, spec: Record<string, unknown> | undefined): string[] {
  const template = spec?.template as { spec?: { volumes?: unknown } } | undefined;
  const dvts = Array.isArray(spec?.dataVolumeTemplates) ? (spec.dataVolumeTemplates as { metadata?: { name?: string } }[]) : [];
  return [...claimsOf(ns, template?.spec?.volumes), ...dvts.flatMap((d) => (d.metadata?.name ? [`${ns}/${d.metadata.name}`] : []))];
}
