/**
 * Which replica set keys an event concerns (reference-replicas-pools-clones.md §1.1): a replica
 * set's own events; a VMI's to the replica set that controls it (and to the previous one when the
 * controller reference changed); an orphan VMI's, when it appears or its labels or owner change,
 * to every replica set of its namespace whose selector matches it, for adoption. The index holds
 * each replica set's selector (a VMI event carries only labels), nothing else of the object.
 */
import type { LabelSelector } from '../../shared/api/index.ts';
import { selectorMatches } from '../../shared/predicates/label-selector.ts';
import { controllerRefName, type EventMapper, type KeyTarget, type WatchedObject } from '../../shared/relay/route.ts';
import { KIND_VMI_REPLICA_SET } from './render-vmi.ts';
import { VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

/** Replica set selectors by namespace, then name. */
export class ReplicaSetIndex {
  readonly #byNamespace = new Map<string, Map<string, LabelSelector | undefined>>();

  set(namespace: string, name: string, selector: LabelSelector | undefined): void {
    let m = this.#byNamespace.get(namespace);
    if (!m) this.#byNamespace.set(namespace, (m = new Map()));
    m.set(name, selector);
  }

  delete(namespace: string, name: string): void {
    const m = this.#byNamespace.get(namespace);
    m?.delete(name);
    if (m?.size === 0) this.#byNamespace.delete(namespace);
  }

  /** Names of the replica sets of `namespace` whose selector matches `labels`. */
  matching(namespace: string, labels: Readonly<Record<string, string>> | undefined): string[] {
    return [...(this.#byNamespace.get(namespace) ?? [])].filter(([, s]) => selectorMatches(s, labels)).map(([n]) => n);
  }
}

/** The replica set controller's mapper, with its own index. */
export function replicaSetMapper(): EventMapper {
  const idx = new ReplicaSetIndex();
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    if (kind === KIND_VMI_REPLICA_SET) {
      if (type === 'DELETED') idx.delete(ns, name);
      else idx.set(ns, name, obj.spec?.selector as LabelSelector | undefined);
      return [{ controller: 'replicaset', key: `${ns}/${name}` }];
    }
    if (kind !== 'VirtualMachineInstance') return [];
    return vmiTargets(ns, type === 'DELETED', obj, old, idx);
  };
}

function vmiTargets(ns: string, deleted: boolean, obj: WatchedObject, old: WatchedObject | undefined, idx: ReplicaSetIndex): KeyTarget[] {
  const owners = new Set<string>();
  const owner = controllerRefName(obj, KIND_VMI_REPLICA_SET);
  const oldOwner = old ? controllerRefName(old, KIND_VMI_REPLICA_SET) : undefined;
  if (owner) owners.add(owner);
  if (oldOwner) owners.add(oldOwner);
  const orphan = obj.metadata?.ownerReferences?.some((r) => r.controller) !== true;
  // An orphan's deletion concerns nobody; its appearance, or a change of its labels or owner, may
  // concern every replica set that selects it.
  if (orphan && !deleted && (old === undefined || labelsChanged(old, obj) || oldOwner !== undefined)) {
    for (const n of idx.matching(ns, obj.metadata?.labels)) owners.add(n);
  }
  return [...owners].map((n) => ({ controller: 'replicaset' as const, key: `${ns}/${n}` }));
}

function labelsChanged(a: WatchedObject, b: WatchedObject): boolean {
  const la = a.metadata?.labels ?? {};
  const lb = b.metadata?.labels ?? {};
  const ka = Object.keys(la);
  return ka.length !== Object.keys(lb).length || ka.some((k) => la[k] !== lb[k]);
}

/** What wakes the replicaset controller's keys. */
export const replicaSetWakes = defineWakes({ controller: 'replicaset', watches: [{ res: VMI_REPLICA_SETS }, { res: VMIS }], mapper: replicaSetMapper });
