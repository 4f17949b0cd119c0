/**
 * The disruption-budget controller's part of the relay (reference node-drain-updates §4.1), keyed
 * by VMI `ns/name`: a PDB's events wake the VMI that controls it (by owner name, the old owner too
 * when an update moved it); VMI events, launcher pod updates and migration updates wake their VMI
 * — but only when a PDB controlled by a VMI of that name is known.
 *
 * Why the filter: the reconcile's only decision is "delete every PDB whose controller is a VMI of
 * this name" (§4.2), so a key without such a PDB is a no-op whatever the VMI, pod or migration
 * event said (§4.5: those informers only wake keys). KubeVirt pays nothing for that no-op (an
 * informer index read); here it is a reconcile and a PDB list, three per VMI in a burst. The
 * relay watches the PDBs, so it knows the owners: a PDB the relay has not seen yet wakes its VMI
 * with its own ADDED event (and a relay's first list delivers every PDB as ADDED), so no wake a
 * reconcile could act on is dropped.
 */
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { controllerRefName } from '../../shared/relay/route.ts';
import { KIND_VMI } from '../../shared/api/well-known.ts';
import { VMIS, PDBS, MIGRATIONS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';
import { LAUNCHER_PODS } from '../../shared/relay/route.ts';

export function disruptionBudgetMapper(): EventMapper {
  /** VMI key `ns/name` → the PDBs (`ns/pdbName`) whose controller is a VMI of that name. */
  const pdbsByOwner = new Map<string, Set<string>>();
  /** PDB `ns/name` → its VMI owner key. */
  const ownerOfPdb = new Map<string, string>();
  const track = (pdbKey: string, ownerKey: string | undefined) => {
    const before = ownerOfPdb.get(pdbKey);
    if (before === ownerKey) return;
    if (before !== undefined) {
      const set = pdbsByOwner.get(before);
      set?.delete(pdbKey);
      if (set?.size === 0) pdbsByOwner.delete(before);
      ownerOfPdb.delete(pdbKey);
    }
    if (ownerKey === undefined) return;
    ownerOfPdb.set(pdbKey, ownerKey);
    let set = pdbsByOwner.get(ownerKey);
    if (!set) pdbsByOwner.set(ownerKey, (set = new Set()));
    set.add(pdbKey);
  };
  const wake = (ns: string, name: string | undefined): KeyTarget[] => (name ? [{ controller: 'disruption-budget', key: `${ns}/${name}` }] : []);
  /** A wake that a reconcile could act on: a VMI-controlled PDB of that name is known. */
  const wakeIfPdb = (ns: string, name: string | undefined): KeyTarget[] => (name && pdbsByOwner.has(`${ns}/${name}`) ? wake(ns, name) : []);
  const owner = (o: WatchedObject | undefined) => (o ? controllerRefName(o, KIND_VMI) : undefined);
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    switch (kind) {
      case 'VirtualMachineInstance':
        return wakeIfPdb(ns, obj.metadata?.name);
      case 'PodDisruptionBudget': {
        const now = owner(obj);
        const before = type === 'MODIFIED' ? owner(old) : undefined;
        const pdbKey = `${ns}/${obj.metadata?.name ?? ''}`;
        track(pdbKey, type === 'DELETED' || now === undefined ? undefined : `${ns}/${now}`);
        return [...(before && before !== now ? wake(ns, before) : []), ...wake(ns, now)];
      }
      case 'Pod':
        // Updates only, and not of pods on their way out.
        return type === 'MODIFIED' && !obj.metadata?.deletionTimestamp ? wakeIfPdb(ns, owner(obj)) : [];
      case 'VirtualMachineInstanceMigration':
        return type === 'MODIFIED' && !obj.metadata?.deletionTimestamp && typeof obj.spec?.vmiName === 'string' ? wakeIfPdb(ns, obj.spec.vmiName) : [];
      default:
        return [];
    }
  };
}

/** What wakes the disruption-budget controller's keys. */
export const disruptionBudgetWakes = defineWakes({ controller: 'disruption-budget', watches: [{ res: VMIS }, { res: PDBS }, LAUNCHER_PODS, { res: MIGRATIONS }], mapper: disruptionBudgetMapper });
