/**
 * The restore controller's part of the relay (reference §2.1): a restore → its key; a PVC or
 * DataVolume carrying `restore.kubevirt.io/name` → that restore; a VM → the restores targeting
 * it; and, beyond KubeVirt (which only retries with backoff), a VirtualMachineSnapshot → the
 * restores of it, so a restore created before its snapshot is ready goes on when it is.
 * VMIs are not watched: a stopped target shows up as its VM's status changing.
 */
import type { EventMapper, KeyTarget } from '../../shared/relay/route.ts';
import { RESTORE_NAME_ANNOTATION } from './names.ts';
import { VM_RESTORES, PVCS, DATA_VOLUMES, VMS, VM_SNAPSHOTS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

export function restoreMapper(): EventMapper {
  const byTarget = new Map<string, Set<string>>(); // ns/vm → restore keys
  const bySnapshot = new Map<string, Set<string>>(); // ns/snapshot → restore keys
  const owners = new Map<string, [string, string]>(); // restore key → [target key, snapshot key]
  const to = (key: string): KeyTarget => ({ controller: 'restore', key });
  const add = (m: Map<string, Set<string>>, k: string, v: string) => (m.get(k) ?? m.set(k, new Set()).get(k)!).add(v);
  return (kind, type, obj) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    switch (kind) {
      case 'VirtualMachineRestore': {
        const old = owners.get(key);
        if (old) {
          byTarget.get(old[0])?.delete(key);
          bySnapshot.get(old[1])?.delete(key);
          owners.delete(key);
        }
        if (type !== 'DELETED') {
          const target = obj.spec?.target as { kind?: string; name?: string } | undefined;
          const t = target?.kind === 'VirtualMachine' ? `${ns}/${target.name ?? ''}` : '';
          const s = `${ns}/${String(obj.spec?.virtualMachineSnapshotName ?? '')}`;
          owners.set(key, [t, s]);
          if (t) add(byTarget, t, key);
          add(bySnapshot, s, key);
        }
        return [to(key)];
      }
      case 'PersistentVolumeClaim':
      case 'DataVolume': {
        const restore = obj.metadata?.annotations?.[RESTORE_NAME_ANNOTATION];
        return restore && type !== 'DELETED' ? [to(`${ns}/${restore}`)] : [];
      }
      case 'VirtualMachine':
        return [...(byTarget.get(key) ?? [])].map(to);
      case 'VirtualMachineSnapshot':
        return [...(bySnapshot.get(key) ?? [])].map(to);
      default:
        return [];
    }
  };
}

/** What wakes the restore controller's keys. */
export const restoreWakes = defineWakes({ controller: 'restore', watches: [{ res: VM_RESTORES }, { res: PVCS }, { res: DATA_VOLUMES }, { res: VMS }, { res: VM_SNAPSHOTS }], mapper: restoreMapper });
