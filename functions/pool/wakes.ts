/**
 * The pool controller's part of the relay (reference §2.1): which pool an event concerns. A pool's
 * own events; a VM to the pool that controls it (and, when the controller reference changed, the
 * old one too — orphans wake nothing, the pool never adopts); a VMI to its VM's pool unless VMI
 * and VM template already carry the same revision label; a ControllerRevision to the pool that
 * controls it; a PVC or DataVolume to the pool of the VM that controls it. Keeps one small index:
 * each pool VM's pool and template revision.
 */
import { KIND_VM } from '../../shared/api/well-known.ts';
import { controllerRefName, type EventMapper, type KeyTarget, type WatchedObject } from '../../shared/relay/route.ts';
import { KIND_POOL, REVISION_LABEL } from './well-known.ts';
import { VM_POOLS, VMS, VMIS, CONTROLLER_REVISIONS, PVCS, DATA_VOLUMES } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

interface VmEntry {
  readonly pool: string;
  readonly templateRevision: string | undefined;
}

function keyOf(obj: WatchedObject, name = obj.metadata?.name ?? ''): string {
  return `${obj.metadata?.namespace ?? ''}/${name}`;
}

function templateRevision(vm: WatchedObject): string | undefined {
  const template = vm.spec?.template as { metadata?: { labels?: Record<string, string> } } | undefined;
  return template?.metadata?.labels?.[REVISION_LABEL];
}

/** The pool mapper with its VM index (one per relay). */
export function poolMapper(): EventMapper {
  const vms = new Map<string, VmEntry>();
  const pool = (obj: WatchedObject, name: string): KeyTarget => ({ controller: 'pool', key: keyOf(obj, name) });
  const viaVm = (obj: WatchedObject): VmEntry | undefined => {
    const vm = controllerRefName(obj, KIND_VM);
    return vm ? vms.get(keyOf(obj, vm)) : undefined;
  };
  return (kind, type, obj, old) => {
    switch (kind) {
      case KIND_POOL:
        return [pool(obj, obj.metadata?.name ?? '')];
      case 'VirtualMachine': {
        const key = keyOf(obj);
        const owner = controllerRefName(obj, KIND_POOL);
        if (type === 'DELETED' || !owner) vms.delete(key);
        else vms.set(key, { pool: owner, templateRevision: templateRevision(obj) });
        const out = owner ? [pool(obj, owner)] : [];
        const before = old ? controllerRefName(old, KIND_POOL) : undefined;
        if (before && before !== owner) out.push(pool(obj, before));
        return out;
      }
      case 'VirtualMachineInstance': {
        if (type === 'DELETED' || (obj.metadata?.deletionTimestamp ?? null) !== null) return [];
        const entry = viaVm(obj);
        if (!entry) return [];
        const revision = obj.metadata?.labels?.[REVISION_LABEL];
        // Already at its VM's revision: nothing for the update to do with this VMI.
        if (revision !== undefined && revision === entry.templateRevision) return [];
        return [pool(obj, entry.pool)];
      }
      case 'ControllerRevision': {
        if (type === 'DELETED') return [];
        const owner = controllerRefName(obj, KIND_POOL);
        return owner ? [pool(obj, owner)] : [];
      }
      case 'PersistentVolumeClaim':
      case 'DataVolume': {
        const entry = viaVm(obj);
        return entry ? [pool(obj, entry.pool)] : [];
      }
      default:
        return [];
    }
  };
}

/** What wakes the pool controller's keys. */
export const poolWakes = defineWakes({ controller: 'pool', watches: [{ res: VM_POOLS }, { res: VMS }, { res: VMIS }, { res: CONTROLLER_REVISIONS }, { res: PVCS }, { res: DATA_VOLUMES }], mapper: poolMapper });
