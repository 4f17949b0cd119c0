/**
 * Maps a watch event to the controller keys it affects (reference.md §a.1, §c, §d.1): the
 * controller-runtime "handlers only map events to keys" rule. Pure apart from the indexes it
 * maintains.
 */
import type { Controller } from '../../shared/queue/message.ts';
import {
  KIND_VM,
  KIND_VMI,
  MIGRATION_JOB_UID_LABEL,
  OWNER_VMI_NAME_ANNOTATION,
  SKIP_BACKUP_HOOKS_ANNOTATION,
} from '../../shared/api/well-known.ts';
import type { RelayIndexes } from './indexes.ts';

/** The kinds the relay watches. */
export type WatchedKind = 'VirtualMachineInstance' | 'VirtualMachine' | 'VirtualMachineInstanceMigration' | 'Pod' | 'PersistentVolumeClaim' | 'DataVolume' | 'KubeVirt';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RELIST';

/** The minimum the mapping reads of an object (raw JSON from the watch). */
export interface WatchedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind?: string; name?: string; uid?: string; controller?: boolean }[];
    deletionTimestamp?: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface KeyTarget {
  readonly controller: Controller;
  readonly key: string;
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
      if (deleted) {
        idx.vmiClaims.delete(key);
        idx.vmis.delete(key);
      } else {
        idx.vmiClaims.set(key, claimsOf(ns, obj.spec?.volumes));
        idx.vmis.add(key);
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
      } else {
        idx.vmiMigrations.set(key, vmiName ? [`${ns}/${vmiName}`] : []);
        if (uid) idx.migrationByUid.set(uid, key);
        if (FINAL_MIGRATION.has(phase)) idx.activeMigrations.delete(key);
        else idx.activeMigrations.add(key);
      }
      const out: KeyTarget[] = [{ controller: 'migration', key }];
      // The VMI controller refuses to create a pod while a migration runs: wake it when one ends.
      if (vmiName) out.push({ controller: 'vmi', key: `${ns}/${vmiName}` });
      return out;
    }
    case 'Pod':
      return mapPod(obj, idx, deleted, old);
    case 'PersistentVolumeClaim':
    case 'DataVolume': {
      const term = key;
      return [
        ...idx.vmiClaims.get(term).map((k) => ({ controller: 'vmi' as const, key: k })),
        ...idx.vmClaims.get(term).map((k) => ({ controller: 'vm' as const, key: k })),
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
  }
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

function controllerRef(obj: WatchedObject, kind: string): string | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === kind)?.name;
}

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
