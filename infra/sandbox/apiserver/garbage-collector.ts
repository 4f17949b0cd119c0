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
import { clone, type KubeObject, type OwnerReference } from './types.ts';
import { commitUpdate } from './writes.ts';

interface Entry {
  res: ResourceInfo;
  obj: KubeObject;
}

const MAX_PASSES = 50;

/** See the module comment. */
export class GarbageCollector {
  private readonly core: Core;
  private scheduled = false;
  private running = false;
  private waiters: Array<() => void> = [];

  constructor(core: Core) {
    this.core = core;
  }

  /** Schedules a sweep on the next turn of the event loop (coalesces bursts of changes). */
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
      for (let i = 0; i < MAX_PASSES && this.pass(); i++);
    } finally {
      this.running = false;
    }
    if (!this.scheduled) {
      const w = this.waiters;
      this.waiters = [];
      for (const fn of w) fn();
    }
  }

  private scope(res: ResourceInfo, ns: string | undefined, identity = GC_IDENTITY): Scope {
    return { res, namespace: ns, identity, dryRun: false };
  }

  private owner(index: Map<string, Entry>, dependent: Entry, ref: OwnerReference): Entry | undefined {
    const found = index.get(ref.uid);
    if (!found || found.obj.metadata.name !== ref.name || found.res.kind !== ref.kind) return undefined;
    // Cluster-scoped dependents can only have cluster-scoped owners; namespaced ones, same namespace.
    if (found.res.namespaced && (!dependent.res.namespaced || found.obj.metadata.namespace !== dependent.obj.metadata.namespace)) return undefined;
    return found;
  }

  /** One sweep; true when it changed something (another pass may find more). */
  private pass(): boolean {
    const { store, registry } = this.core;
    const all: Entry[] = [];
    for (const res of registry.stored) for (const obj of store.scan(res)) all.push({ res, obj });
    const index = new Map(all.map((e) => [e.obj.metadata.uid!, e] as const));
    const dependents = new Map<string, Entry[]>();
    let changed = false;

    for (const d of all) {
      const refs = d.obj.metadata.ownerReferences ?? [];
      if (refs.length === 0) continue;
      const solid: OwnerReference[] = [];
      const stale: OwnerReference[] = [];
      let dangling = 0;
      let waiting = 0;
      for (const ref of refs) {
        const o = this.owner(index, d, ref);
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
        if (!d.obj.metadata.deletionTimestamp) {
          deleteObject(this.core, this.scope(d.res, ns), d.obj.metadata.name!, { propagationPolicy: waiting > 0 ? 'Foreground' : 'Background' });
          changed = true;
        }
      } else if (stale.length > 0) {
        // Some owners remain (or an owner orphans us): strip the stale references only.
        const next = clone(d.obj);
        next.metadata.ownerReferences = refs.filter((r) => !stale.includes(r));
        commitUpdate(this.core, this.scope(d.res, ns), d.obj, next, 'patch');
        changed = true;
        continue;
      }
      for (const ref of refs) {
        const list = dependents.get(ref.uid) ?? [];
        list.push(d);
        dependents.set(ref.uid, list);
      }
    }

    for (const o of all) {
      const md = o.obj.metadata;
      if (!md.deletionTimestamp || !md.finalizers) continue;
      const current = store.peek(o.res, md.namespace, md.name!);
      if (!current || current.metadata.uid !== md.uid) continue;
      const deps = (dependents.get(md.uid!) ?? []).filter((d) => store.peek(d.res, d.obj.metadata.namespace, d.obj.metadata.name!));
      let drop: string | undefined;
      if (md.finalizers.includes('orphan') && deps.length === 0) drop = 'orphan';
      else if (md.finalizers.includes('foregroundDeletion')) {
        const blocking = deps.some((d) => d.obj.metadata.ownerReferences?.some((r) => r.uid === md.uid && r.blockOwnerDeletion));
        if (!blocking) drop = 'foregroundDeletion';
      }
      if (drop) {
        const next = clone(current);
        next.metadata.finalizers = current.metadata.finalizers!.filter((f) => f !== drop);
        commitUpdate(this.core, this.scope(o.res, md.namespace), current, next, 'patch');
        changed = true;
      }
    }
    return this.namespaces() || changed;
  }

  /** Namespace controller: empties terminating namespaces, then removes them. */
  private namespaces(): boolean {
    const { store, registry } = this.core;
    const nsRes = registry.byPath('', 'v1', 'namespaces')!;
    let changed = false;
    for (const ns of store.scan(nsRes)) {
      if (!ns.metadata.deletionTimestamp) continue;
      const name = ns.metadata.name!;
      let remaining = 0;
      for (const res of registry.stored) {
        if (!res.namespaced) continue;
        for (const obj of store.scan(res, name)) {
          remaining++;
          if (!obj.metadata.deletionTimestamp) {
            deleteObject(this.core, this.scope(res, name, NAMESPACE_CONTROLLER_IDENTITY), obj.metadata.name!, {});
            changed = true;
          }
        }
      }
      if (remaining === 0 && !ns.metadata.finalizers?.length) {
        store.remove(nsRes, undefined, name, { identity: NAMESPACE_CONTROLLER_IDENTITY, verb: 'delete' });
        changed = true;
      }
    }
    return changed;
  }
}
