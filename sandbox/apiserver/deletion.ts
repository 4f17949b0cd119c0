/**
 * DELETE with the real registry's rules: preconditions, finalizers (the object stays with a
 * deletionTimestamp), propagation policies (Foreground/Orphan add their finalizer, the garbage
 * collector finishes), and pod graceful deletion (a scheduled, non-terminal pod stays until the
 * kubelet deletes it with grace 0 — or, in the sandbox, until its grace period expires).
 */
import { KUBELET_GRACE_IDENTITY, writeContext, type Core, type Scope } from './core.ts';
import { badRequest, notFound, preconditionConflict } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import { clone, isObject, type KubeObject } from './types.ts';

/** DeleteOptions from the query string and/or the request body. */
export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan' | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
}

/** Outcome of a delete: `removed` when the object is gone, else its deleting state. */
export interface DeleteResult {
  removed: boolean;
  object: KubeObject;
}

/**
 * DeleteOptions of a request: from the body when there is one, else from the query — as
 * kube-apiserver's delete handler, which decodes the query only when the body is empty (so a
 * `gracePeriodSeconds` query beside a body is ignored).
 */
export function parseDeleteOptions(query: URLSearchParams, body: unknown): DeleteOptions {
  const fromBody = isObject(body);
  const b = fromBody ? body : {};
  const q = (name: string) => (fromBody ? null : query.get(name));
  const out: DeleteOptions = {};
  const grace = q('gracePeriodSeconds') ?? (b.gracePeriodSeconds === undefined || b.gracePeriodSeconds === null ? null : String(b.gracePeriodSeconds));
  if (grace !== null && grace !== '') {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw badRequest(`invalid gracePeriodSeconds: ${grace}`);
    out.gracePeriodSeconds = Math.max(0, n);
  }
  const policy = q('propagationPolicy') ?? (typeof b.propagationPolicy === 'string' ? b.propagationPolicy : null);
  const orphan = q('orphanDependents') ?? (typeof b.orphanDependents === 'boolean' ? String(b.orphanDependents) : null);
  if (policy) {
    if (!['Foreground', 'Background', 'Orphan'].includes(policy)) throw badRequest(`propagationPolicy: Unsupported value: "${policy}"`);
    out.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  } else if (orphan === 'true') out.propagationPolicy = 'Orphan';
  if (isObject(b.preconditions)) out.preconditions = b.preconditions as DeleteOptions['preconditions'];
  return out;
}

function podGrace(obj: KubeObject, requested: number | undefined): number {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  // Upstream CheckGracefulDelete: unscheduled or terminated pods go immediately.
  if (!spec.nodeName || status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
  if (requested !== undefined) return requested;
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

function deletedResponseTarget(res: ResourceInfo): boolean {
  return res.builtin;
}

/** Removes the object now (no finalizers left, grace 0). */
function removeNow(core: Core, scope: Scope, stored: KubeObject, verb: string): DeleteResult {
  if (scope.dryRun) return { removed: true, object: clone(stored) };
  const last = core.store.remove(scope.res, stored.metadata.namespace, stored.metadata.name!, writeContext(scope, verb))!;
  core.kickControllers();
  return { removed: true, object: clone(last) };
}

/** Ends a pod's grace period: kubelet-style final delete (kept while finalizers remain). */
export function finishGracefulDeletion(core: Core, res: ResourceInfo, ns: string | undefined, name: string, uid: string): void {
  const stored = core.store.peek(res, ns, name);
  if (!stored || stored.metadata.uid !== uid || !stored.metadata.deletionTimestamp) return;
  const scope: Scope = { res, namespace: ns, identity: KUBELET_GRACE_IDENTITY, dryRun: false };
  deleteObject(core, scope, name, { gracePeriodSeconds: 0 });
}

/** DELETE one object. */
export function deleteObject(core: Core, scope: Scope, name: string, opts: DeleteOptions, verb = 'delete'): DeleteResult {
  const res = scope.res;
  const stored = core.store.peek(res, scope.namespace, name);
  if (!stored) throw notFound(res, name);
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== stored.metadata.uid) {
    throw preconditionConflict(res, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${stored.metadata.uid}). The object might have been deleted and then recreated`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== stored.metadata.resourceVersion) {
    throw preconditionConflict(res, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${stored.metadata.resourceVersion}). The object might have been modified`);
  }
  const grace = res.group === '' && res.resource === 'pods' ? podGrace(stored, opts.gracePeriodSeconds) : 0;
  const md = stored.metadata;
  const now = core.clock.nowMs();

  if (md.deletionTimestamp) {
    // Already deleting: only a shorter grace period changes anything (the kubelet's grace-0 delete).
    const remaining = md.deletionGracePeriodSeconds ?? 0;
    if (grace >= remaining) return { removed: false, object: clone(stored) };
    if (grace === 0 && !md.finalizers?.length) return removeNow(core, scope, stored, verb);
    const next = clone(stored);
    next.metadata.deletionTimestamp = isoSeconds(now + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    if (scope.dryRun) return { removed: false, object: next };
    const written = core.store.put(res, next, writeContext(scope, verb));
    scheduleGraceExpiry(core, res, written, grace);
    return { removed: false, object: clone(written) };
  }

  const finalizers = [...(md.finalizers ?? [])];
  if (opts.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
  if (opts.propagationPolicy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
  // Namespaces always terminate through the namespace controller (spec.finalizers: kubernetes).
  const namespace = res.group === '' && res.resource === 'namespaces';
  if (grace === 0 && finalizers.length === 0 && !namespace) return removeNow(core, scope, stored, verb);

  const next = clone(stored);
  next.metadata.deletionTimestamp = isoSeconds(now + grace * 1000);
  next.metadata.deletionGracePeriodSeconds = grace;
  next.metadata.generation = (md.generation ?? 1) + 1;
  if (finalizers.length > 0) next.metadata.finalizers = finalizers;
  if (namespace) next.status = { ...(isObject(stored.status) ? stored.status : {}), phase: 'Terminating' };
  if (scope.dryRun) return { removed: false, object: next };
  const written = core.store.put(res, next, writeContext(scope, verb));
  scheduleGraceExpiry(core, res, written, grace);
  core.kickControllers();
  return { removed: false, object: clone(written) };
}

function scheduleGraceExpiry(core: Core, res: ResourceInfo, obj: KubeObject, grace: number): void {
  if (grace <= 0 || !core.podGraceExpiry) return;
  const { namespace, name, uid } = obj.metadata;
  core.clock.setTimeout(() => finishGracefulDeletion(core, res, namespace, name!, uid!), grace * 1000);
}

function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The response body of a DELETE: the object for built-ins, a Success Status for removed CRs. */
export function deleteResponse(res: ResourceInfo, result: DeleteResult): unknown {
  if (!result.removed || deletedResponseTarget(res)) return result.object;
  const details: Record<string, unknown> = { name: result.object.metadata.name, kind: res.resource, uid: result.object.metadata.uid };
  if (res.group) details.group = res.group;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

