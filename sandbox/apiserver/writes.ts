/**
 * Create, update (PUT) and patch with the real registry's rules: generateName, metadata the
 * client may not set, namespace lifecycle admission, optimistic concurrency, the status
 * subresource split, generation bumps, finalizer rules on deleting objects, no-op updates that
 * write nothing.
 */
import { randomUUID } from 'node:crypto';
import { userOf, writeContext, type Core, type Scope } from './core.ts';
import { admitCreate, validateCreate } from './admission.ts';
import { checkMicroTimes, generateName, prepareForCreate, prepareNamedForCreate, validateMetadata, validateName } from './defaults.ts';
import { alreadyExists, ApiError, badRequest, conflict, forbidden, invalid, notFound, unsupportedMediaType } from './errors.ts';
import { duplicateJsonFields } from './duplicate-fields.ts';
import { decodeError, enforceFieldValidation, patchError, pruneUnknownFields, strictProblems } from './field-validation.ts';
import { applyJsonPatch, jsonPatchProblems } from './json-patch.ts';
import { applyMergePatch } from './merge-patch.ts';
import { apiVersionOf } from './resources.ts';
import { updateManagedFields } from './managed-fields.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';
import { clone, isObject, jsonEqual, type KubeObject } from './types.ts';

const MAX_NAME_ATTEMPTS = 8;

/**
 * The request's object, typed from the URL. `body` is the caller's to give away (the HTTP edge's
 * freshly decoded JSON, an object built for the call): it becomes the object written, without a
 * copy, so nothing may hold it or change it afterwards.
 */
function asObject(scope: Scope, body: unknown): KubeObject {
  if (!isObject(body)) throw badRequest('the body of the request was not a JSON object');
  // Custom resources decode as unstructured objects, which need their type in the body (built-in
  // kinds take it from the URL): the real server refuses a CR body without kind or apiVersion.
  if (!scope.res.builtin) {
    const missing = typeof body.kind !== 'string' || !body.kind ? 'Kind' : typeof body.apiVersion !== 'string' || !body.apiVersion ? 'apiVersion' : undefined;
    if (missing) {
      const json = JSON.stringify(body);
      throw badRequest(`the object provided is unrecognized (must be of type ${scope.res.kind}): Object '${missing}' is missing in '${json}' (${json.slice(0, 30)} ...)`);
    }
  }
  const obj = body as KubeObject;
  if (!isObject(obj.metadata)) obj.metadata = {};
  obj.apiVersion = apiVersionOf(scope.res);
  obj.kind = scope.res.kind;
  return obj;
}

/**
 * Field validation of a request's object (in place: unknown fields are pruned whatever the
 * directive). `text` is the body as sent, for repeated keys; `extra` are problems found in the
 * patch document itself (JSON patch operations).
 */
function validateFields(core: Core, scope: Scope, obj: KubeObject, kind: 'body' | 'patch', text: string | undefined, wrap: (message: string) => ApiError, extra: string[] = [], patch?: { type: string; body: unknown }): void {
  if (!scope.fieldValidation) return;
  const duplicates = text !== undefined && scope.fieldValidation !== 'Ignore' ? duplicateJsonFields(text) : [];
  const before = patch && scope.fieldValidation === 'Strict' ? clone(obj) : undefined;
  const scan = pruneUnknownFields(core.openapi.schemas, scope.res, obj, kind === 'body' ? duplicates : []);
  let problems = strictProblems(kind, scope.res, scan, duplicates, extra);
  if (patch && scope.fieldValidation === 'Strict') {
    const smp = patch.type === 'application/strategic-merge-patch+json';
    // A strategic merge patch that fails on unknown fields reports those only.
    if (smp && scan.unknown.length > 0) problems = strictProblems('patch', scope.res, scan, []);
    wrap = patchError(patch.type, scan.unknown.length > 0, before, patch.body);
  }
  enforceFieldValidation(scope.fieldValidation, problems, (scope.warnings ??= []), wrap);
}

/**
 * Sets `next.metadata.managedFields` for a write: as server-side apply computed them, as an
 * `Update` by the request's manager, or — for the emulator's own writes — as they were.
 */
function trackManagedFields(core: Core, scope: Scope, live: KubeObject | undefined, next: KubeObject, sent: unknown, subresource?: string): void {
  const md = next.metadata;
  if (scope.applying) md.managedFields = sent;
  else if (scope.fieldManager !== undefined) {
    md.managedFields = sent;
    md.managedFields = updateManagedFields({ typed: core.openapi.typed, schema: core.openapi.schemas.of(scope.res), res: scope.res, subresource, live, next, manager: scope.fieldManager, apiVersion: apiVersionOf(scope.res), now: core.clock.isoNow() });
  } else md.managedFields = live?.metadata.managedFields;
  if (md.managedFields === undefined) delete md.managedFields;
}

/** NamespaceLifecycle admission: 404 for a missing namespace, 403 while it terminates. */
export function admitNamespace(core: Core, scope: Scope): void {
  if (!scope.res.namespaced || !scope.namespace) return;
  const nsRes = core.registry.byPath('', 'v1', 'namespaces')!;
  const ns = core.store.peek(nsRes, undefined, scope.namespace);
  if (!ns) throw notFound(nsRes, scope.namespace);
  if (ns.metadata.deletionTimestamp) {
    throw forbidden(`${scope.res.resource}${scope.res.group ? `.${scope.res.group}` : ''} is forbidden: unable to create new content in namespace ${scope.namespace} because it is being terminated`, { kind: scope.res.resource, ...(scope.res.group ? { group: scope.res.group } : {}) });
  }
}

/** POST a new object. */
export function createObject(core: Core, scope: Scope, body: unknown, text?: string): KubeObject {
  // The decoder's wording names the kind and version as sent, which asObject then overwrites.
  const wrap = decodeError(scope.res, isObject(body) ? body : {});
  const obj = asObject(scope, body);
  validateFields(core, scope, obj, 'body', text, wrap);
  const md = obj.metadata;
  if (scope.res.namespaced) {
    if (md.namespace && md.namespace !== scope.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    md.namespace = scope.namespace!;
  } else delete md.namespace;
  // The storage layer refuses a create that names a resourceVersion, with a 500 (etcd3 store).
  if (md.resourceVersion !== undefined && md.resourceVersion !== '') throw new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
  const sentManagedFields = md.managedFields;
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'] as const) delete md[k];
  if (!md.name && !md.generateName) {
    throw invalid(scope.res, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'name or generateName is required' }]);
  }
  admitNamespace(core, scope);
  admitCreate(core, scope, obj);
  // Mutating webhooks run before the storage create: they may replace anything but the identity
  // the server assigns below (the metadata they return is kept as the object's).
  for (const hook of core.mutatingCreateHooks ?? []) {
    const mutated = hook(core, withCopy({ res: scope.res, namespace: md.namespace, identity: scope.identity, user: userOf(scope), dryRun: scope.dryRun }, obj));
    if (mutated === undefined) continue;
    const target = obj as Record<string, unknown>;
    for (const k of Object.keys(target)) if (k !== 'metadata' && !(k in mutated)) delete target[k];
    for (const [k, v] of Object.entries(mutated)) if (k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') target[k] = v;
    // `md` stays the object's metadata (the rest of the create writes into it).
    const next = (mutated['metadata'] ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(md)) if (!(k in next)) delete (md as Record<string, unknown>)[k];
    Object.assign(md, next);
  }
  if (scope.res.status && !scope.res.builtin) delete obj.status;
  prepareForCreate(scope.res, obj);
  md.uid = randomUUID();
  md.creationTimestamp = core.clock.isoNow();
  md.generation = 1;
  trackManagedFields(core, scope, undefined, obj, sentManagedFields);
  const explicit = md.name;
  for (let attempt = 0; ; attempt++) {
    if (!explicit) md.name = generateName(md.generateName!);
    validateName(scope.res, md.name!);
    if (!core.store.peek(scope.res, md.namespace, md.name!)) break;
    // Upstream retries generated names on collision (apiserver ≥ 1.30: 8 attempts).
    if (explicit || attempt + 1 >= MAX_NAME_ATTEMPTS) throw alreadyExists(scope.res, md.name!);
  }
  validateMetadata(scope.res, md.name!, md);
  prepareNamedForCreate(scope.res, obj);
  checkMicroTimes(scope.res, obj);
  // Validating admission (compiled-in plugins, then webhooks) sees the object after defaulting, dry runs included.
  validateCreate(core, scope, obj);
  // Validating hooks only read: they see the object itself, not a copy.
  const validating = { res: scope.res, namespace: md.namespace, object: obj as Record<string, unknown>, identity: scope.identity, user: userOf(scope), dryRun: scope.dryRun };
  for (const hook of core.createHooks ?? []) hook(core, validating);
  if (scope.dryRun) return obj;
  return core.store.put(scope.res, obj, writeContext(scope, 'create'));
}

function outsideMetadata(res: Scope['res'], o: KubeObject): Record<string, unknown> {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
  if (res.status) delete rest.status;
  return rest;
}

/**
 * Applies the update rules to `incoming` (the client's view) against `stored`, and writes it.
 * `subresource` is 'status' for /status writes. Returns what the client gets back: the stored
 * object itself (immutable, store.ts), or for a dry run what would have been stored.
 *
 * `incoming` is the caller's to give away: a fresh object nothing else holds or changes later.
 * The next version is built without deep copies — its top level and metadata are new objects
 * (all that is changed below), the rest is shared with `incoming` or with the stored object.
 */
export function commitUpdate(core: Core, scope: Scope, stored: KubeObject, incoming: KubeObject, verb: string, subresource?: string): KubeObject {
  const res = scope.res;
  let next: KubeObject;
  if (subresource === 'status') {
    if (res.builtin) {
      // Built-in status strategies keep spec and ownerReferences, accept label/annotation changes.
      next = { ...stored, metadata: { ...incoming.metadata }, status: incoming.status };
      if (stored.spec !== undefined) next.spec = stored.spec;
      else delete next.spec;
      if (stored.metadata.ownerReferences) next.metadata.ownerReferences = stored.metadata.ownerReferences;
      else delete next.metadata.ownerReferences;
      if (stored.metadata.finalizers) next.metadata.finalizers = stored.metadata.finalizers;
      else delete next.metadata.finalizers;
    } else {
      // CR status strategy: everything but .status comes from the stored object.
      next = { ...stored, metadata: { ...stored.metadata } };
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
    }
  } else {
    next = { ...incoming, metadata: { ...incoming.metadata } };
    if (res.status) {
      if (stored.status === undefined) delete next.status;
      else next.status = stored.status;
    }
  }
  next.apiVersion = apiVersionOf(res);
  next.kind = res.kind;
  const md = next.metadata;
  const old = stored.metadata;
  for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'name', 'namespace', 'generateName'] as const) {
    if (old[k] === undefined) delete md[k];
    else (md as Record<string, unknown>)[k] = old[k];
  }
  const sentManagedFields = md.managedFields;
  delete md.managedFields;
  md.resourceVersion = old.resourceVersion!;
  if (md.labels && Object.keys(md.labels).length === 0) delete md.labels;
  if (md.annotations && Object.keys(md.annotations).length === 0) delete md.annotations;
  if (md.finalizers && md.finalizers.length === 0) delete md.finalizers;
  if (md.ownerReferences && md.ownerReferences.length === 0) delete md.ownerReferences;

  validateMetadata(res, old.name!, md);
  checkMicroTimes(res, next);
  if (old.deletionTimestamp) {
    const added = (md.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
    if (added.length > 0) {
      throw invalid(res, old.name!, [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}` }]);
    }
  }
  admitUpdate(core, scope, stored, next, subresource);
  trackManagedFields(core, scope, stored, next, sentManagedFields, subresource);
  if (!jsonEqual(outsideMetadata(res, stored), outsideMetadata(res, next))) md.generation = (old.generation ?? 1) + 1;
  if (jsonEqual(stored, next)) return stored; // no-op: nothing written, RV unchanged
  if (scope.dryRun) return next;
  if (old.deletionTimestamp && !md.finalizers && !(old.deletionGracePeriodSeconds ?? 0)) {
    // Emptied finalizers on a deleting object: removed at once, watchers see only DELETED.
    return core.store.remove(res, old.namespace, old.name!, writeContext(scope, verb, subresource))!;
  }
  return core.store.put(res, next, writeContext(scope, verb, subresource));
}

/** Metadata an update's mutating webhook may change (the rest is the server's). */
const MUTABLE_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/**
 * Update admission of requests (the emulator's own writes have no user and skip it): mutating
 * webhooks, whose answer replaces `next` in place (everything but the server's metadata), then
 * validating webhooks, which refuse by throwing.
 */
function admitUpdate(core: Core, scope: Scope, stored: KubeObject, next: KubeObject, subresource: string | undefined): void {
  if (scope.user === undefined || (!core.mutatingUpdateHooks?.length && !core.updateHooks?.length)) return;
  const request = (object: KubeObject) => withCopy({ res: scope.res, namespace: scope.namespace, subresource, oldObject: stored as Record<string, unknown>, identity: scope.identity, user: userOf(scope), dryRun: scope.dryRun }, object);
  for (const hook of core.mutatingUpdateHooks ?? []) {
    const mutated = hook(core, request(next)) as KubeObject | undefined;
    if (mutated === undefined) continue;
    const target = next as Record<string, unknown>;
    for (const k of Object.keys(target)) if (k !== 'metadata' && k !== 'apiVersion' && k !== 'kind' && !(k in mutated)) delete target[k];
    for (const [k, v] of Object.entries(mutated)) if (k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') target[k] = v;
    const md = next.metadata as Record<string, unknown>;
    const from = (mutated.metadata ?? {}) as Record<string, unknown>;
    for (const k of MUTABLE_METADATA) {
      if (from[k] === undefined) delete md[k];
      else md[k] = from[k];
    }
  }
  // Validating hooks only read: they see the object itself, not a copy.
  const validating = { res: scope.res, namespace: scope.namespace, subresource, oldObject: stored as Record<string, unknown>, object: next as Record<string, unknown>, identity: scope.identity, user: userOf(scope), dryRun: scope.dryRun };
  for (const hook of core.updateHooks ?? []) hook(core, validating);
}

/**
 * A mutating hook's request, whose `object` is a copy of `object` made when the hook first reads
 * it: every hook gets every request (as every webhook's rules are matched), and most look no
 * further than the resource or the user — a copy of the object for each hook was a tenth of the
 * emulator's CPU at 10,000 VMIs. kube-apiserver likewise serializes the object only for a webhook
 * whose rules match.
 */
function withCopy<R extends object>(request: R, object: KubeObject): R & { readonly object: Record<string, unknown> } {
  let copy: Record<string, unknown> | undefined;
  return Object.defineProperty(request, 'object', {
    enumerable: true,
    get: () => (copy ??= clone(object) as Record<string, unknown>),
  }) as R & { readonly object: Record<string, unknown> };
}

function loadForWrite(core: Core, scope: Scope, name: string): KubeObject {
  const stored = core.store.peek(scope.res, scope.namespace, name);
  if (!stored) throw notFound(scope.res, name);
  return stored;
}

/** PUT an object or its /status. */
export function updateObject(core: Core, scope: Scope, name: string, body: unknown, subresource?: string, text?: string): KubeObject {
  const wrap = decodeError(scope.res, isObject(body) ? body : {});
  const incoming = asObject(scope, body);
  validateFields(core, scope, incoming, 'body', text, wrap);
  if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
    throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (scope.res.namespaced && incoming.metadata.namespace && incoming.metadata.namespace !== scope.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const stored = loadForWrite(core, scope, name);
  const rv = incoming.metadata.resourceVersion;
  if (rv === undefined || rv === '') {
    // Built-in kinds allow unconditional updates; custom resources require a resourceVersion.
    if (!scope.res.builtin) {
      throw invalid(scope.res, name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: '0x0: must be specified for an update' }]);
    }
  } else if (rv !== stored.metadata.resourceVersion) throw conflict(scope.res, name);
  return commitUpdate(core, scope, stored, incoming, 'update', subresource);
}

/** Patch content types the server understands, in the order of its 415 message. */
const CR_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** PATCH an object or its /status with a JSON, merge or strategic merge patch. */
export function patchObject(core: Core, scope: Scope, name: string, contentType: string, body: unknown, subresource?: string, text?: string): KubeObject {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const accepted = scope.res.builtin ? [...CR_PATCH_TYPES, 'application/strategic-merge-patch+json'] : CR_PATCH_TYPES;
  if (!accepted.includes(type)) throw unsupportedMediaType(type, accepted);
  const stored = loadForWrite(core, scope, name);
  let patched: unknown;
  if (type === 'application/json-patch+json') patched = applyJsonPatch(stored, body);
  else {
    if (!isObject(body)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    patched = type === 'application/merge-patch+json' ? applyMergePatch(stored, body) : applyStrategicMergePatch(stored, body);
  }
  if (!isObject(patched)) throw new ApiError(422, 'Invalid', 'the patched object is not a JSON object');
  const incoming = patched as KubeObject;
  if (!isObject(incoming.metadata)) incoming.metadata = {};
  // A patch only conflicts when it carries a resourceVersion precondition of its own.
  if (incoming.metadata.resourceVersion !== stored.metadata.resourceVersion) throw conflict(scope.res, name);
  if (incoming.metadata.name !== name) throw badRequest('metadata.name cannot be changed by a patch');
  if (type === 'application/json-patch+json') validateFields(core, scope, incoming, 'patch', undefined, badRequest, scope.fieldValidation && scope.fieldValidation !== 'Ignore' ? jsonPatchProblems(body, text) : [], { type, body });
  else validateFields(core, scope, incoming, 'patch', text, badRequest, [], { type, body });
  return commitUpdate(core, scope, stored, incoming, 'patch', subresource);
}
