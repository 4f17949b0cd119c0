/**
 * Which clone keys an event concerns (reference §3.1). Each clone is indexed (names only) by
 * its source VM, its target VM, its source snapshot, the snapshot it waits for in
 * SnapshotInProgress, and its restore (in RestoreInProgress, and once Succeeded):
 * - a clone → its key;
 * - a VirtualMachineSnapshot → the clone owning it, and the clones that use it as their source or wait for it;
 * - a VirtualMachineRestore → the clone owning it, and the clones waiting for it;
 * - a Bound claim a restore made (annotation `restore.kubevirt.io/name`) → the Succeeded clones of that restore;
 * - a VM added → the clones of that source; updated → the same, only when its `volumeSnapshotStatuses`
 *   changed; deleted → the clones targeting it (a Succeeded clone goes with its target).
 */
import { isDeepStrictEqual } from 'node:util';
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { CLONE_API_VERSION, KIND_CLONE, PHASE, RESTORE_NAME_ANNOTATION } from './names.ts';
import { VM_CLONES, VM_SNAPSHOTS, VM_RESTORES, PVCS, VMS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

type IndexName = 'vmSource' | 'vmTarget' | 'snapshotSource' | 'snapshotInProgress' | 'restoreInProgress' | 'succeeded';
type Ref = { apiGroup?: string; kind?: string; name?: string };

/** The index values (`ns/name`) of one clone. */
function indexValues(ns: string, clone: WatchedObject): Partial<Record<IndexName, string>> {
  const source = clone.spec?.source as Ref | undefined;
  const target = clone.spec?.target as Ref | undefined;
  const st = clone.status as { phase?: string; snapshotName?: string; restoreName?: string } | undefined;
  const at = (name: string | undefined) => (name ? `${ns}/${name}` : undefined);
  const out: Partial<Record<IndexName, string | undefined>> = {
    vmSource: source?.apiGroup === 'kubevirt.io' && source.kind === 'VirtualMachine' ? at(source.name) : undefined,
    vmTarget: target?.apiGroup === 'kubevirt.io' && target.kind === 'VirtualMachine' ? at(target.name) : undefined,
    snapshotSource: source?.apiGroup === 'snapshot.kubevirt.io' && source.kind === 'VirtualMachineSnapshot' ? at(source.name) : undefined,
    snapshotInProgress: st?.phase === PHASE.snapshotInProgress ? at(st.snapshotName) : undefined,
    restoreInProgress: st?.phase === PHASE.restoreInProgress ? at(st.restoreName) : undefined,
    succeeded: st?.phase === PHASE.succeeded ? at(st.restoreName) : undefined,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Partial<Record<IndexName, string>>;
}

const ownerClone = (obj: WatchedObject) => obj.metadata?.ownerReferences?.find((r) => r.kind === KIND_CLONE && r.apiVersion === CLONE_API_VERSION)?.name;

/** The clone mapper, with its indexes (one per relay). */
export function cloneMapper(): EventMapper {
  const byClone = new Map<string, Partial<Record<IndexName, string>>>(); // clone key → its index values
  const clonesAt = (index: IndexName, value: string) => [...byClone].filter(([, v]) => v[index] === value).map(([k]) => k);
  const to = (keys: Iterable<string>): KeyTarget[] => [...new Set(keys)].map((key) => ({ controller: 'clone', key }));
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    const owner = ownerClone(obj);
    const owned = owner ? [`${ns}/${owner}`] : [];
    switch (kind) {
      case KIND_CLONE:
        if (type === 'DELETED') byClone.delete(key);
        else byClone.set(key, indexValues(ns, obj));
        return to([key]);
      case 'VirtualMachineSnapshot':
        return to([...owned, ...clonesAt('snapshotSource', key), ...clonesAt('snapshotInProgress', key)]);
      case 'VirtualMachineRestore':
        return to([...owned, ...clonesAt('restoreInProgress', key)]);
      case 'PersistentVolumeClaim': {
        const restore = obj.metadata?.annotations?.[RESTORE_NAME_ANNOTATION];
        if (!restore || type === 'DELETED' || obj.status?.phase !== 'Bound') return [];
        return to(clonesAt('succeeded', `${ns}/${restore}`));
      }
      case 'VirtualMachine':
        if (type === 'DELETED') return to(clonesAt('vmTarget', key));
        if (type === 'MODIFIED' && old && isDeepStrictEqual(old.status?.volumeSnapshotStatuses, obj.status?.volumeSnapshotStatuses)) return [];
        return to(clonesAt('vmSource', key));
      default:
        return [];
    }
  };
}

/** What wakes the clone controller's keys. */
export const cloneWakes = defineWakes({ controller: 'clone', watches: [{ res: VM_CLONES }, { res: VM_SNAPSHOTS }, { res: VM_RESTORES }, { res: PVCS }, { res: VMS }], mapper: cloneMapper });
