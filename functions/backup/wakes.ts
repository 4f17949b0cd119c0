/**
 * Which backup keys an event concerns (reference §4.1): a backup's own events; a VMI's status
 * change → the backups of that VM, directly or through a tracker of it; a tracker's add or update
 * → the backups that use it, and its own key when its checkpoint needs redefining; a pull
 * backup's VMExport (added, deleted, status changed) → the backup that controls it. The indexes
 * hold only names: each backup's source, each tracker's VM.
 */
import { isDeepStrictEqual } from 'node:util';
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { BACKUP_API_VERSION, KIND_BACKUP, KIND_TRACKER } from './names.ts';
import { VM_BACKUPS, VM_BACKUP_TRACKERS, VMIS, VM_EXPORTS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

type Source = { kind?: string; name?: string };

class NameIndex {
  readonly #m = new Map<string, string>(); // `ns/name` → `ns/target`

  set(ns: string, name: string, target: string | undefined): void {
    if (target === undefined) this.#m.delete(`${ns}/${name}`);
    else this.#m.set(`${ns}/${name}`, `${ns}/${target}`);
  }

  /** Names (within `ns`) whose target is `target`. */
  pointingAt(ns: string, target: string): string[] {
    const want = `${ns}/${target}`;
    return [...this.#m].filter(([, t]) => t === want).map(([k]) => k.slice(ns.length + 1));
  }
}

const target = (ns: string, name: string): KeyTarget => ({ controller: 'backup', key: `${ns}/${name}` });

/** The backup controller's mapper, with its indexes. */
export function backupMapper(): EventMapper {
  const byVm = new NameIndex(); // backup → the VM it backs up (source kind VirtualMachine)
  const byTracker = new NameIndex(); // backup → its tracker
  const trackerVm = new NameIndex(); // tracker → its VM
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    switch (kind) {
      case KIND_BACKUP: {
        const source = obj.spec?.source as Source | undefined;
        const gone = type === 'DELETED';
        byVm.set(ns, name, !gone && source?.kind === 'VirtualMachine' ? source.name : undefined);
        byTracker.set(ns, name, !gone && source?.kind === KIND_TRACKER ? source.name : undefined);
        return [target(ns, name)];
      }
      case KIND_TRACKER: {
        if (type === 'DELETED') {
          trackerVm.set(ns, name, undefined);
          return [];
        }
        trackerVm.set(ns, name, (obj.spec?.source as Source | undefined)?.name);
        const status = obj.status as { checkpointRedefinitionRequired?: boolean; latestCheckpoint?: { name?: string } } | undefined;
        const own = status?.checkpointRedefinitionRequired === true && (status.latestCheckpoint?.name ?? '') !== '' ? [target(ns, name)] : [];
        return [...own, ...byTracker.pointingAt(ns, name).map((b) => target(ns, b))];
      }
      case 'VirtualMachineInstance': {
        if (type === 'ADDED' || type === 'DELETED' || (old && isDeepStrictEqual(old.status, obj.status))) return [];
        const backups = new Set(byVm.pointingAt(ns, name));
        for (const t of trackerVm.pointingAt(ns, name)) for (const b of byTracker.pointingAt(ns, t)) backups.add(b);
        return [...backups].map((b) => target(ns, b));
      }
      case 'VirtualMachineExport': {
        if (type === 'MODIFIED' && old && isDeepStrictEqual(old.status, obj.status)) return [];
        const owner = ownerBackup(obj);
        return owner ? [target(ns, owner)] : [];
      }
      default:
        return [];
    }
  };
}

function ownerBackup(obj: WatchedObject): string | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === KIND_BACKUP && r.apiVersion === BACKUP_API_VERSION)?.name;
}

/** What wakes the backup controller's keys. */
export const backupWakes = defineWakes({ controller: 'backup', watches: [{ res: VM_BACKUPS }, { res: VM_BACKUP_TRACKERS }, { res: VMIS }, { res: VM_EXPORTS }], mapper: backupMapper });
