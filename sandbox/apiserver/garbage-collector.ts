/**
 * The garbage collector and the namespace controller, run asynchronously after changes (like
 * kube-controller-manager's, so tests cannot rely on synchronous cascades; `settle()` waits).
 *
 * Owners are matched by uid (an owner re-created under the same name is a different owner),
 * cross-namespace references count as absent. A dependent whose owners are all absent is
 * deleted; dangling references are stripped while other owners remain. Owners deleting with
 * `foregroundDeletion` get their dependents deleted and lose the finalizer once no dependent
 * with `blockOwnerDeletion: true` remains; owners with `orphan` get their references stripped
 * from dependents, then lose the finalizer.
 */
import { GC_IDENTITY, NAMESPACE_CONTROLLER_IDENTITY, type Core, type Scope } from './core.ts';
import { deleteObject } from './deletion.ts';
import type { ResourceInfo } from './resources.ts';
import type { StoreEvent } from './store.ts';
import { clone, type KubeObject, type OwnerReference } from './types.ts';
import { commitUpdate } from './writes.ts';

interface Entry {
  res: ResourceInfo;
  obj: KubeObject;
}

const MAX_PASSES = 50;

/** Finalizers by which an owner asks the collector for work on its dependents. */
const OWNER_FINALIZERS = ['orphan', 'foregroundDeletion'];

/**
 * See the module comment. Incremental, as kube-controller-manager's graph builder is: the store's
 * events keep an index (uid → object, owner uid → dependents) and mark what a change can affect
 * (the written object as a dependent, the owners it names, the dependents of a deleted or
 * deleting owner, a terminating namespace); a pass looks only at those. A sweep of every object
 * after every write made the emulator's cost per write grow with the number of objects.
 */
export class GarbageCollector {
  private readonly core: Core;
  private scheduled = false;
  private running = false;
  private waiters: Array<() => void> = [];
  private readonly byUid = new Map<string, Entry>();
  private readonly dependentsOf = new Map<string, Set<string>>();
  private dirtyDependents = new Set<string>();
  private dirtyOwners = new Set<string>();
  private dirtyNamespaces = new Set<string>();
  private readonly terminatingNamespaces = new Set<string>();

  constructor(core: Core) {
    this.core = core;
    // Objects stored before the collector was made (none in practice): index them as if just written.
    for (const res of core.registry.stored) for (const obj of core.store.scan(res)) this.note({ type: 'ADDED', res, object: obj });
  }

  /** Indexes one committed change and marks what it can affect; the store calls it synchronously. */
  note(e: Pick<StoreEvent, 'type' | 'res' | 'object' | 'prev'>): void {
    const md = e.object.metadata;
    const uid = md.uid;
    if (!uid) return;
    if (e.res.kind === 'Namespace' && !e.res.group) {
      if (e.type !== 'DELETED' && md.deletionTimestamp) {
        this.terminatingNamespaces.add(md.name!);
        this.dirtyNamespaces.add(md.name!);
      } else this.terminatingNamespaces.delete(md.name!);
    } else if (md.namespace && this.terminatingNamespaces.has(md.namespace)) this.dirtyNamespaces.add(md.namespace);
    for (const ref of e.prev?.metadata.ownerReferences ?? []) {
      this.dependentsOf.get(ref.uid)?.delete(uid);
      this.dirtyOwners.add(ref.uid);
    }
    if (e.type === 'DELETED') {
      this.byUid.delete(uid);
      for (const ref of md.ownerReferences ?? []) {
        this.dependentsOf.get(ref.uid)?.delete(uid);
        this.dirtyOwners.add(ref.uid);
      }
      // Its dependents may now be dangling; they keep naming it until they are deleted or stripped.
      for (const d of this.dependentsOf.get(uid) ?? []) this.dirtyDependents.add(d);
      return;
    }
    this.byUid.set(uid, { res: e.res, obj: e.object });
    const refs = md.ownerReferences ?? [];
    for (const ref of refs) {
      let set = this.dependentsOf.get(ref.uid);
      if (!set) this.dependentsOf.set(ref.uid, (set = new Set()));
      set.add(uid);
      this.dirtyOwners.add(ref.uid);
    }
    if (refs.length > 0) this.dirtyDependents.add(uid);
    if (md.deletionTimestamp && md.finalizers?.some((f) => OWNER_FINALIZERS.includes(f))) {
      this.dirtyOwners.add(uid);
      for (const d of this.dependentsOf.get(uid) ?? []) this.dirtyDependents.add(d);
    }
  }

  /** Schedules a pass on the next turn of the event loop (coalesces bursts of changes). */
  kick(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.run());
  }

  /** Resolves once every cascade caused by changes so far has been carried out. */
  settle(): Promise<void> {
    if (!this.scheduled && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private run(): void {
    this.scheduled = false;
    this.running = true;
    try {
      for (let i = 0; i < MAX_PASSES && this.hasWork(); i++) this.pass();
    } finally {
      this.running = false;
    }
    if (this.hasWork()) this.kick();
    if (!this.scheduled) {
      const w = this.waiters;
      this.waiters = [];
      for (const fn of w) fn();
    }
  }

  private hasWork(): boolean {
    return this.dirtyDependents.size > 0 || this.dirtyOwners.size > 0 || this.dirtyNamespaces.size > 0;
  }

  private scope(res: ResourceInfo, ns: string | undefined, identity = GC_IDENTITY): Scope {
    return { res, namespace: ns, identity, dryRun: false };
  }

  private owner(dependent: Entry, ref: OwnerReference): Entry | undefined {
    const found = this.byUid.get(ref.uid);
    if (!found || found.obj.metadata.name !== ref.name || found.res.kind !== ref.kind) return undefined;
    // Cluster-scoped dependents can only have cluster-scoped owners; namespaced ones, same namespace.
    if (found.res.namespaced && (!dependent.res.namespaced || found.obj.metadata.namespace !== dependent.obj.metadata.namespace)) return undefined;
    return found;
  }

  /** One pass over what the changes so far marked; the writes it makes mark the next pass's work. */
  private pass(): void {
    const dependents = this.dirtyDependents;
    const owners = this.dirtyOwners;
    const namespaces = this.dirtyNamespaces;
    this.dirtyDependents = new Set();
    this.dirtyOwners = new Set();
    this.dirtyNamespaces = new Set();
    for (const uid of dependents) {
      const d = this.byUid.get(uid);
      if (d) this.collectDependent(d);
    }
    for (const uid of owners) {
      const o = this.byUid.get(uid);
      if (o) this.releaseOwner(o);
    }
    for (const ns of namespaces) this.emptyNamespace(ns);
  }

  /** A dependent whose owners are all gone (or deleting in the foreground) goes; stale references are stripped. */
  private collectDependent(d: Entry): void {
    const refs = d.obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const solid: OwnerReference[] = [];
    const stale: OwnerReference[] = [];
    let dangling = 0;
    let waiting = 0;
    for (const ref of refs) {
      const o = this.owner(d, ref);
      const deleting = o?.obj.metadata.deletionTimestamp ? (o.obj.metadata.finalizers ?? []) : [];
      if (!o) {
        dangling++;
        stale.push(ref);
      } else if (deleting.includes('orphan')) stale.push(ref);
      else if (deleting.includes('foregroundDeletion')) {
        waiting++;
        stale.push(ref);
      } else solid.push(ref);
    }
    const ns = d.obj.metadata.namespace;
    const orphaned = refs.length - solid.length - dangling - waiting;
    if (solid.length === 0 && orphaned === 0 && (dangling > 0 || waiting > 0)) {
      // Every owner is gone or deleting in the foreground: the dependent goes too.
      if (!d.obj.metadata.deletionTimestamp) deleteObject(this.core, this.scope(d.res, ns), d.obj.metadata.name!, { propagationPolicy: waiting > 0 ? 'Foreground' : 'Background' });
    } else if (stale.length > 0) {
      // Some owners remain (or an owner orphans us): strip the stale references only.
      const next = clone(d.obj);
      next.metadata.ownerReferences = refs.filter((r) => !stale.includes(r));
      commitUpdate(this.core, this.scope(d.res, ns), d.obj, next, 'patch');
    }
  }

  /** A deleting owner loses `orphan` once no dependent names it, `foregroundDeletion` once none blocks it. */
  private releaseOwner(o: Entry): void {
    const md = o.obj.metadata;
    if (!md.deletionTimestamp || !md.finalizers?.some((f) => OWNER_FINALIZERS.includes(f))) return;
    const deps = [...(this.dependentsOf.get(md.uid!) ?? [])].map((uid) => this.byUid.get(uid)).filter((d): d is Entry => d !== undefined);
    let drop: string | undefined;
    if (md.finalizers.includes('orphan') && deps.length === 0) drop = 'orphan';
    else if (md.finalizers.includes('foregroundDeletion')) {
      const blocking = deps.some((d) => d.obj.metadata.ownerReferences?.some((r) => r.uid === md.uid && r.blockOwnerDeletion));
      if (!blocking) drop = 'foregroundDeletion';
    }
    if (drop) {
      const next = clone(o.obj);
      next.metadata.finalizers = md.finalizers.filter((f) => f !== drop);
      commitUpdate(this.core, this.scope(o.res, md.namespace), o.obj, next, 'patch');
    }
  }

  /** Namespace controller: empties a terminating namespace, then removes it. */
  private emptyNamespace(name: string): void {
    const { store, registry } = this.core;
    const nsRes = registry.byPath('', 'v1', 'namespaces')!;
    const ns = store.peek(nsRes, undefined, name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const res of registry.stored) {
      if (!res.namespaced) continue;
      for (const obj of store.scan(res, name)) {
        remaining++;
        if (!obj.metadata.deletionTimestamp) deleteObject(this.core, this.scope(res, name, NAMESPACE_CONTROLLER_IDENTITY), obj.metadata.name!, {});
      }
    }
    if (remaining === 0 && !ns.metadata.finalizers?.length) store.remove(nsRes, undefined, name, { identity: NAMESPACE_CONTROLLER_IDENTITY, verb: 'delete' });
  }
}
