/**
 * A pool's ControllerRevisions (reference §2.6): one per pool generation, named
 * `<pool>-<generation>`, holding the whole pool spec as its `data`. A VM's revision label says
 * which one it was rendered from; a VM is outdated when that revision's VM template differs from
 * the live pool's. Revisions no VM or VMI names any more are pruned. Pure.
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePool, VirtualMachinePoolSpec } from '../../shared/api/index.ts';
import { controllerOf } from '../../shared/predicates/owner-refs.ts';
import { poolOwnerRef } from './render-vm.ts';
import { KIND_POOL, REVISION_LABEL } from './well-known.ts';

/** The name of the pool's current revision: `<pool>-<metadata.generation>`. */
export function revisionName(pool: VirtualMachinePool): string {
  return `${pool.metadata?.name ?? ''}-${pool.metadata?.generation ?? 0}`;
}

/** The current revision to create: no labels, the pool as controller, the spec as data. */
export function renderRevision(pool: VirtualMachinePool): V1ControllerRevision {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: revisionName(pool), namespace: pool.metadata?.namespace ?? '', ownerReferences: [poolOwnerRef(pool)] },
    data: structuredClone(pool.spec) as object,
    revision: pool.metadata?.generation ?? 0,
  };
}

/** The pool spec a revision holds (its `data`, as an object or a JSON string); undefined when unreadable. */
export function revisionSpec(rev: V1ControllerRevision): VirtualMachinePoolSpec | undefined {
  const data: unknown = rev.data;
  try {
    const spec = typeof data === 'string' ? (JSON.parse(data) as unknown) : data;
    return spec !== null && typeof spec === 'object' ? (spec as VirtualMachinePoolSpec) : undefined;
  } catch {
    return undefined;
  }
}

/** True when `obj`'s controller is the pool of `uid` (kind VirtualMachinePool: the `vmpool` index). */
export function isPoolControlled(obj: Parameters<typeof controllerOf>[0], uid: string | undefined): boolean {
  const ref = controllerOf(obj);
  return uid !== undefined && ref?.kind === KIND_POOL && ref.uid === uid;
}

/** The revisions controlled by the pool (the `vmpool` index: controller ref kind VirtualMachinePool, the pool's UID). */
export function poolRevisions(pool: VirtualMachinePool, all: readonly V1ControllerRevision[]): Map<string, V1ControllerRevision> {
  const uid = pool.metadata?.uid;
  return new Map(all.filter((r) => isPoolControlled(r, uid)).map((r) => [r.metadata?.name ?? '', r]));
}

/**
 * apimachinery's semantic equality as far as JSON shows it: a nil and an empty map or slice are
 * equal, so an absent field equals `{}`/`[]`/`null`.
 */
export function semanticallyEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalized(a)) === JSON.stringify(normalized(b));
}

function normalized(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((x) => normalized(x) ?? null);
  if (v !== null && typeof v === 'object') {
    const entries = Object.keys(v)
      .sort()
      .map((k) => [k, normalized((v as Record<string, unknown>)[k])] as const)
      .filter(([, x]) => x !== undefined);
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return v === null ? undefined : v;
}

/** The revision label of an object (VM, VM template, VMI). */
export function revisionOf(obj: { metadata?: { labels?: Record<string, string> | undefined } | undefined }): string | undefined {
  return obj.metadata?.labels?.[REVISION_LABEL];
}

/**
 * True when `vm` must be re-rendered: no labels, no revision label, its revision unknown, or that
 * revision's VM template not semantically equal to the live pool's.
 */
export function isOutdated(vm: VirtualMachine, revisions: ReadonlyMap<string, V1ControllerRevision>, pool: VirtualMachinePool): boolean {
  const name = revisionOf(vm);
  if (name === undefined) return true;
  const rev = revisions.get(name);
  const spec = rev ? revisionSpec(rev) : undefined;
  if (!spec) return true;
  return !semanticallyEqual(spec.virtualMachineTemplate, pool.spec.virtualMachineTemplate);
}

/**
 * Names of the pool's revisions to delete: those referenced neither by a kept VM's revision label
 * nor by the revision label of the VMI of the same name. The current revision is not protected
 * (upstream's behaviour, Q-P12): the next scale-out or update creates it again.
 */
export function prunableRevisions(revisions: ReadonlyMap<string, V1ControllerRevision>, vms: readonly VirtualMachine[], vmis: ReadonlyMap<string, VirtualMachineInstance>): string[] {
  const used = new Set<string>();
  for (const vm of vms) {
    const own = revisionOf(vm);
    if (own) used.add(own);
    const vmi = vmis.get(vm.metadata?.name ?? '');
    const ofVmi = vmi ? revisionOf(vmi) : undefined;
    if (ofVmi) used.add(ofVmi);
  }
  return [...revisions.keys()].filter((n) => !used.has(n)).sort();
}
