/**
 * The `/scale` subresource (autoscaling/v1 Scale) of CRDs that declare one and of the built-in
 * workloads: GET reads replicas through `specReplicasPath` / `statusReplicasPath` /
 * `labelSelectorPath`; PUT and PATCH (merge or JSON patch on the Scale, what `kubectl scale`
 * sends) write `spec.replicas` back into the object, with the main resource's update rules.
 */
import type { Core, Scope } from './core.ts';
import { badRequest, conflict, invalid, notFound, unsupportedMediaType } from './errors.ts';
import { applyJsonPatch } from './json-patch.ts';
import { applyMergePatch } from './merge-patch.ts';
import type { ResourceInfo, ScaleSubresource } from './resources.ts';
import { clone, isObject, type KubeObject } from './types.ts';
import { commitUpdate } from './writes.ts';

/** `.spec.replicas` → ['spec', 'replicas']. */
function pathParts(path: string): string[] {
  return path.replace(/^\./, '').split('.').filter(Boolean);
}

function read(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of pathParts(path)) cur = isObject(cur) ? cur[p] : undefined;
  return cur;
}

function write(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = pathParts(path);
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isObject(cur[p])) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

function selectorString(sel: unknown): string {
  if (typeof sel === 'string') return sel;
  if (!isObject(sel)) return '';
  const parts = Object.entries(isObject(sel.matchLabels) ? sel.matchLabels : {}).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions.filter(isObject) : []) {
    const values = Array.isArray(e.values) ? e.values.join(',') : '';
    const op = String(e.operator);
    parts.push(op === 'Exists' ? String(e.key) : op === 'DoesNotExist' ? `!${String(e.key)}` : `${String(e.key)} ${op.toLowerCase()} (${values})`);
  }
  return parts.join(',');
}

function spec(res: ResourceInfo): ScaleSubresource {
  return res.scale!;
}

/** The Scale view of an object. */
export function scaleOf(res: ResourceInfo, obj: KubeObject): object {
  const s = spec(res);
  const replicas = read(obj, s.specReplicasPath);
  const status: Record<string, unknown> = { replicas: Number(read(obj, s.statusReplicasPath) ?? 0) };
  // Built-ins keep a selector object in spec; a CRD's labelSelectorPath names a string.
  const selector = res.builtin ? selectorString(read(obj, '.spec.selector')) : s.labelSelectorPath ? read(obj, s.labelSelectorPath) : undefined;
  if (typeof selector === 'string' && selector !== '') status.selector = selector;
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name, ...(namespace ? { namespace } : {}), uid, resourceVersion, creationTimestamp }, spec: { replicas: typeof replicas === 'number' ? replicas : 0 }, status };
}

function load(core: Core, scope: Scope, name: string): KubeObject {
  const stored = core.store.peek(scope.res, scope.namespace, name);
  if (!stored) throw notFound(scope.res, name);
  return stored;
}

/** GET …/scale. */
export function getScale(core: Core, scope: Scope, name: string): object {
  return scaleOf(scope.res, load(core, scope, name));
}

function writeReplicas(core: Core, scope: Scope, stored: KubeObject, scale: unknown, verb: string): object {
  if (!isObject(scale)) throw badRequest('the body of the request was not an autoscaling/v1 Scale object');
  const md = isObject(scale.metadata) ? scale.metadata : {};
  if (typeof md.resourceVersion === 'string' && md.resourceVersion !== '' && md.resourceVersion !== stored.metadata.resourceVersion) throw conflict(scope.res, stored.metadata.name!);
  const replicas = isObject(scale.spec) ? scale.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid({ group: 'autoscaling', kind: 'Scale' }, stored.metadata.name!, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0` }]);
  }
  const next = clone(stored);
  write(next as Record<string, unknown>, spec(scope.res).specReplicasPath, replicas);
  const written = commitUpdate(core, scope, stored, next, verb, 'scale');
  core.kickControllers();
  return scaleOf(scope.res, written);
}

/** PUT …/scale. */
export function updateScale(core: Core, scope: Scope, name: string, body: unknown): object {
  return writeReplicas(core, scope, load(core, scope, name), body, 'update');
}

/** PATCH …/scale (merge and JSON patches of the Scale object). */
export function patchScale(core: Core, scope: Scope, name: string, contentType: string, body: unknown): object {
  const stored = load(core, scope, name);
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const current = scaleOf(scope.res, stored);
  let patched: unknown;
  if (type === 'application/json-patch+json') patched = applyJsonPatch(current, body);
  else if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
    if (!isObject(body)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    patched = applyMergePatch(current, body);
  } else throw unsupportedMediaType(type, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
  return writeReplicas(core, scope, stored, patched, 'patch');
}
