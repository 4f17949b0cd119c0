/**
 * The disruption-budget controller's part of the relay (reference node-drain-updates §4.1), keyed
 * by VMI `ns/name`: every VMI event; a PDB's events wake the VMI that controls it (by owner name,
 * the old owner too when an update moved it); launcher pod and migration updates wake their VMI.
 */
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { controllerRefName } from '../../shared/relay/route.ts';
import { KIND_VMI } from '../../shared/api/well-known.ts';

export function disruptionBudgetMapper(): EventMapper {
  const wake = (ns: string, name: string | undefined): KeyTarget[] => (name ? [{ controller: 'disruption-budget', key: `${ns}/${name}` }] : []);
  const owner = (o: WatchedObject | undefined) => (o ? controllerRefName(o, KIND_VMI) : undefined);
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    switch (kind) {
      case 'VirtualMachineInstance':
        return wake(ns, obj.metadata?.name);
      case 'PodDisruptionBudget': {
        const now = owner(obj);
        const before = type === 'MODIFIED' ? owner(old) : undefined;
        return [...(before && before !== now ? wake(ns, before) : []), ...wake(ns, now)];
      }
      case 'Pod':
        // Updates only, and not of pods on their way out.
        return type === 'MODIFIED' && !obj.metadata?.deletionTimestamp ? wake(ns, owner(obj)) : [];
      case 'VirtualMachineInstanceMigration':
        return type === 'MODIFIED' && !obj.metadata?.deletionTimestamp && typeof obj.spec?.vmiName === 'string' ? wake(ns, obj.spec.vmiName) : [];
      default:
        return [];
    }
  };
}
