/**
 * What wakes the VM controller's keys (reference.md §c): its VM's own events; its VMI's (by
 * controller reference; an orphan VMI wakes the VM of its name only when one exists, which may
 * adopt it — otherwise every standalone VMI would cost the VM controller a read per event; a VM
 * created later is reconciled on its own ADDED event); and the PVCs and DataVolumes its template
 * and DataVolume templates use; and a namespace whose labels change wakes its VMs (KubeVirt's
 * `handleNamespaceUpdate`: changed-block tracking's namespace selector may now select them or no
 * longer — the relay has no cluster config, so every VM of the namespace, on label changes only).
 */
import { DATA_VOLUMES, NAMESPACES, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { KIND_VM } from '../../shared/api/well-known.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';
import { vmClaims } from '../../shared/relay/claims.ts';
import { KeyIndex } from '../../shared/relay/key-index.ts';
import { controllerRefName, type EventMapper, type KeyTarget } from '../../shared/relay/route.ts';

export function vmMapper(): EventMapper {
  /** `ns/claim` → VM keys whose template volumes or DataVolume templates use it. */
  const claims = new KeyIndex();
  /** Every VM key. */
  const vms = new Set<string>();
  const wake = (key: string): KeyTarget => ({ controller: 'vm', key });
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    switch (kind) {
      case 'VirtualMachine':
        if (type === 'DELETED') {
          claims.delete(key);
          vms.delete(key);
        } else {
          claims.set(key, vmClaims(ns, obj.spec));
          vms.add(key);
        }
        return [wake(key)];
      case 'VirtualMachineInstance': {
        const vm = controllerRefName(obj, KIND_VM);
        if (vm) return [wake(`${ns}/${vm}`)];
        return vms.has(key) ? [wake(key)] : [];
      }
      case 'PersistentVolumeClaim':
      case 'DataVolume':
        return claims.get(key).map(wake);
      case 'Namespace': {
        // A label change only (the previous object, when the relay knows it, tells); a new
        // namespace's VMs are woken by their own events.
        if (type !== 'MODIFIED') return [];
        const labels = (o: typeof obj | undefined) => JSON.stringify(Object.entries(o?.metadata?.labels ?? {}).sort());
        if (old !== undefined && labels(old) === labels(obj)) return [];
        const name = obj.metadata?.name ?? '';
        return [...vms].filter((k) => k.startsWith(`${name}/`)).map(wake);
      }
      default:
        return [];
    }
  };
}

/** What wakes the VM controller's keys. */
export const vmWakes = defineWakes({ controller: 'vm', watches: [{ res: VMS }, { res: VMIS }, { res: PVCS }, { res: DATA_VOLUMES }, { res: NAMESPACES }], mapper: vmMapper });
