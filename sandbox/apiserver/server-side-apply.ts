/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`), as k8s.io/apiserver's field
 * manager and structured-merge-diff do it: the configuration is merged into the live object (or
 * creates it), the applier's entry in managedFields becomes exactly the set of fields it sent,
 * fields it sent last time and no longer does are removed unless someone else owns them, and a
 * value another manager owns that this apply would change is a 409 naming the fields and their
 * managers — unless `force=true`, which takes them over. kubectl's own upgrade path is kept: a
 * `kubectl` apply whose only conflicts are fields of the object's last client-side apply
 * (`kubectl.kubernetes.io/last-applied-configuration`) goes through.
 */
import { parse } from 'yaml';
import type { Core, Scope } from './core.ts';
import { duplicateYamlKeys } from './duplicate-fields.ts';
import { ApiError, badRequest, invalid, notFound } from './errors.ts';
import { FieldSet, pathString } from './field-set.ts';
import { pruneUnknownFields } from './field-validation.ts';
import { decodeManagedFields, emptyObject, encodeManagedFields, managerId, withoutIgnored, withoutManagedFields, type Manager, type Managers } from './managed-fields.ts';
import { apiVersionOf } from './resources.ts';
import { clone, isObject, jsonEqual, type KubeObject } from './types.ts';
import { commitUpdate, createObject } from './writes.ts';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** What an apply request carries besides its body. */
export interface ApplyOptions {
  /** `?fieldManager=` (required). */
  fieldManager: string;
  force: boolean;
  subresource?: string;
}

/** The result of an apply: the object and whether it was created (201). */
export interface Applied {
  object: KubeObject;
  created: boolean;
}

/** PATCH …/{name} with an apply configuration. */
export function applyObject(core: Core, scope: Scope, name: string, text: string, opts: ApplyOptions): Applied {
  if (!opts.fieldManager) {
    throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [{ reason: 'FieldValueRequired', field: 'fieldManager', message: 'is required for apply patch' }]);
  }
  const config = decodeApplyConfiguration(scope, name, text);
  rejectUndeclaredFields(core, scope, name, config);
  const res = scope.res;
  const typed = core.openapi.typed;
  const schema = core.openapi.schemas.of(res);
  const apiVersion = apiVersionOf(res);
  const live = core.store.peek(res, scope.namespace, name);
  if (!live && opts.subresource) throw notFound(res, name);
  const base: KubeObject = live ? withoutManagedFields(live) : { ...emptyObject(typed, res, schema), apiVersion, kind: res.kind, metadata: { name, ...(res.namespaced ? { namespace: scope.namespace! } : {}) } };

  const managers = decodeManagedFields(live?.metadata.managedFields);
  if (live && managers.size === 0) {
    // An object nobody manages yet (written before managed fields): its fields are owned by
    // "before-first-apply", so a first apply that changes them conflicts, as upstream.
    const entry = { manager: 'before-first-apply', operation: 'Update' as const, apiVersion };
    managers.set(managerId(entry), { entry, set: withoutIgnored(typed.toFieldSet(schema, base), res, opts.subresource) });
  }
  const applyId = managerId({ manager: opts.fieldManager, operation: 'Apply' });
  const previous = managers.get(applyId);
  const applied = withoutIgnored(typed.toFieldSet(schema, config), res, opts.subresource);
  const merged = typed.mergeFields(schema, base, config) as KubeObject;

  // Fields this manager applied before and no longer does go, unless someone else owns them.
  const others = new FieldSet();
  for (const [id, m] of managers) if (id !== applyId) others.addAll(m.set);
  if (previous) {
    const keep = applied.union(others);
    for (const path of previous.set.difference(keep).paths()) {
      // A struct field that still has an owned field below it stays (upstream's
      // EnsureNamedFieldsAreMembers): only paths nobody keeps anything under go.
      if (keep.at(path)?.empty() === false) continue;
      typed.removePath(schema, merged, path, keep);
    }
  }

  const diff = typed.compareFields(schema, base, merged);
  const changed = withoutIgnored(diff.modified.union(diff.added), res, opts.subresource);
  const removed = withoutIgnored(diff.removed, res, opts.subresource);
  let conflicts = conflictsOf(managers, applyId, changed);
  if (conflicts.length > 0 && !opts.force && opts.fieldManager === 'kubectl') conflicts = beyondLastApplied(core, scope, live, conflicts);
  if (conflicts.length > 0 && !opts.force) throw conflictError(conflicts);
  for (const [id, m] of managers) if (id !== applyId) m.set = m.set.difference(changed).difference(removed);

  // The entry's time moves only when the apply changed the object: a manager that only starts
  // sharing fields it applied with equal values has no time yet (and sorts first), as upstream.
  const time = !jsonEqual(base, merged) ? core.clock.isoNow() : previous?.entry.time;
  managers.set(applyId, { entry: { manager: opts.fieldManager, operation: 'Apply', apiVersion, ...(time ? { time } : {}), ...(opts.subresource ? { subresource: opts.subresource } : {}) }, set: applied });
  merged.metadata = { ...merged.metadata, managedFields: encodeManagedFields(managers) };
  if (merged.metadata.managedFields === undefined) delete merged.metadata.managedFields;

  // The object as written goes through the ordinary create/update rules; field validation
  // already ran on the configuration and ownership is settled.
  const write: Scope = { res, namespace: scope.namespace, identity: scope.identity, ...(scope.user !== undefined ? { user: scope.user } : {}), ...(scope.impersonated ? { impersonated: true } : {}), dryRun: scope.dryRun, applying: true };
  if (!live) return { object: createObject(core, write, merged), created: true };
  return { object: commitUpdate(core, write, live, merged, 'patch', opts.subresource), created: false };
}

/** The configuration: YAML (or JSON) that must be an object of this kind, with strict checks. */
function decodeApplyConfiguration(scope: Scope, name: string, text: string): KubeObject {
  let value: unknown;
  try {
    value = parse(text, { uniqueKeys: false });
  } catch (err) {
    throw badRequest(`error decoding YAML: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw badRequest('error decoding YAML: the apply configuration is not an object');
  const config = value as KubeObject;
  if (!isObject(config.metadata)) config.metadata = {};
  const res = scope.res;
  if (config.apiVersion !== apiVersionOf(res) || config.kind !== res.kind) {
    const gv = String(config.apiVersion ?? '');
    throw badRequest(`invalid object type: ${gv.includes('/') ? gv : `/${gv}`}, Kind=${String(config.kind ?? '')}`);
  }
  if (config.metadata.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  if (config.metadata.name !== undefined && config.metadata.name !== name) {
    throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (res.namespaced && config.metadata.namespace && config.metadata.namespace !== scope.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (scope.fieldValidation === 'Strict' || scope.fieldValidation === 'Warn') {
    const repeats = duplicateYamlKeys(text);
    if (repeats.length > 0 && scope.fieldValidation === 'Strict') {
      throw badRequest(`error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  ${repeats.join('\n  ')}`);
    }
    (scope.warnings ??= []).push(...repeats);
  }
  return config;
}

/**
 * Unknown fields in an apply configuration are an error whatever the directive: upstream cannot
 * build the typed object ("field not declared in schema"), a 500 without a reason.
 */
function rejectUndeclaredFields(core: Core, scope: Scope, name: string, config: KubeObject): void {
  const scan = pruneUnknownFields(core.openapi.schemas, scope.res, clone(config));
  if (scan.unknown.length === 0) return;
  const errors = scan.unknown.map((p) => `.${p}: field not declared in schema`);
  const gvk = `${scope.res.group}/${scope.res.version}, Kind=${scope.res.kind}`;
  const what = errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => `  ${e}`)].join('\n');
  throw new ApiError(500, '', `failed to create typed patch object (${config.metadata.namespace ?? ''}/${config.metadata.name ?? ''}; ${gvk}): ${what}`);
}

interface Conflict {
  manager: Manager;
  paths: string[][];
}

function conflictsOf(managers: Managers, applyId: string, changed: FieldSet): Conflict[] {
  const out: Conflict[] = [];
  for (const [id, m] of managers) {
    if (id === applyId) continue;
    const paths = m.set.intersection(changed).paths();
    if (paths.length > 0) out.push({ manager: m, paths });
  }
  return out.sort((a, b) => (printManager(a.manager) < printManager(b.manager) ? -1 : 1));
}

/** kubectl's client-side → server-side upgrade: conflicts on fields of the last client-side apply are allowed. */
function beyondLastApplied(core: Core, scope: Scope, live: KubeObject | undefined, conflicts: Conflict[]): Conflict[] {
  const raw = live?.metadata.annotations?.[LAST_APPLIED];
  if (!raw) return conflicts;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return conflicts;
  }
  const allowed = core.openapi.typed.toFieldSet(core.openapi.schemas.of(scope.res), last);
  return conflicts.map((c) => ({ ...c, paths: c.paths.filter((p) => !allowed.has(p)) })).filter((c) => c.paths.length > 0);
}

/** `"kubectl-client-side-apply" using v1`, `"alice"`, `"x" with subresource "status" using v1`. */
function printManager(m: Manager): string {
  let out = JSON.stringify(m.entry.manager ?? '');
  if (m.entry.subresource) out += ` with subresource ${JSON.stringify(m.entry.subresource)}`;
  if (m.entry.operation === 'Update') out += ` using ${m.entry.apiVersion ?? ''}`;
  return out;
}

/** The 409 upstream answers: `Apply failed with 1 conflict: conflict with "alice": .spec.x`. */
function conflictError(conflicts: Conflict[]): ApiError {
  const causes = conflicts.flatMap((c) => c.paths.map((p) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(p) })));
  let message: string;
  if (causes.length === 1) message = `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`;
  else {
    const lines = conflicts.flatMap((c) => [`conflicts with ${printManager(c.manager)}:`, ...c.paths.map((p) => `- ${pathString(p)}`)]);
    message = `Apply failed with ${causes.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}
