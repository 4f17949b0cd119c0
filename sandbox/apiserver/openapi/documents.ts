/**
 * The OpenAPI documents: `/openapi/v3` (the index of group-version documents, each URL carrying
 * a content hash as the real server's do), `/openapi/v3/{api/v1 | apis/g/v}` and `/openapi/v2`
 * (Swagger 2.0, JSON only). kubectl reads the v3 documents for `explain` and, before `apply`,
 * checks that the PATCH operation of the kind lists the `fieldValidation` query parameter —
 * without that it falls back to downloading /openapi/v2 as protobuf, which the emulator does not
 * speak (406), and validation fails.
 */
import { createHash } from 'node:crypto';
import type { ResourceInfo, ResourceRegistry } from '../resources.ts';
import { Typed } from '../typed-fields.ts';
import { SchemaIndex, type Schema } from './schemas.ts';

type Json = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const REF = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

function queryParam(name: string, description: string, type = 'string'): Json {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}
const DRY_RUN = queryParam('dryRun', 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed');
const FIELD_MANAGER = queryParam('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types.');
const FIELD_VALIDATION = queryParam('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict');
const FORCE = queryParam('force', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people.', 'boolean');
const LIST_PARAMS = ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'].map((n) => queryParam(n, `${n} of a list or watch`, ['limit', 'timeoutSeconds'].includes(n) ? 'integer' : ['watch', 'allowWatchBookmarks', 'sendInitialEvents'].includes(n) ? 'boolean' : 'string'));
const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

function body(schema: Json, types = ['application/json', 'application/yaml']): Json {
  return { content: Object.fromEntries(types.map((t) => [t, { schema }])) };
}

function op(res: ResourceInfo, action: string, verb: string, schema: string, extra: Json = {}, kind = res.kind): Json {
  const gv = res.group ? `${res.group}/${res.version}` : res.version;
  return {
    description: `${action} ${kind}`,
    operationId: `${verb}${res.kind}`,
    responses: { '200': { description: 'OK', ...body(REF(schema)) }, '401': { description: 'Unauthorized' } },
    tags: [gv.replace(/[./]/g, '_')],
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': { group: res.group, kind, version: res.version },
    ...extra,
  };
}

/** The path items of one resource (collection, item, status, scale). */
function resourcePaths(res: ResourceInfo): Record<string, Json> {
  const base = res.group ? `/apis/${res.group}/${res.version}` : `/api/${res.version}`;
  const coll = res.namespaced ? `${base}/namespaces/{namespace}/${res.resource}` : `${base}/${res.resource}`;
  const item = `${coll}/{name}`;
  const pathParams = [{ name: 'name', in: 'path', required: true, description: `name of the ${res.kind}`, schema: { type: 'string', uniqueItems: true } }];
  if (res.namespaced) pathParams.push({ name: 'namespace', in: 'path', required: true, description: 'object name and auth scope, such as for teams and projects', schema: { type: 'string', uniqueItems: true } });
  const kindRef = REF(res.schemaName);
  const writeParams = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const patchTypes = res.builtin ? PATCH_TYPES : PATCH_TYPES.filter((t) => !t.startsWith('application/strategic'));
  const itemOps = (schema: string, kind?: string): Json => ({
    get: op(res, 'read the specified', 'get', schema, {}, kind),
    put: op(res, 'replace the specified', 'put', schema, { parameters: writeParams, requestBody: { ...body(REF(schema)), required: true } }, kind),
    patch: op(res, 'partially update the specified', 'patch', schema, { parameters: [...writeParams, FORCE], requestBody: { ...body(REF(`${META}.Patch`), patchTypes), required: true } }, kind),
    parameters: res.namespaced ? pathParams : pathParams.slice(0, 1),
  });
  const out: Record<string, Json> = {
    [coll]: {
      get: op(res, 'list or watch objects of kind', 'list', `${res.schemaName}List`, { parameters: LIST_PARAMS }),
      post: op(res, 'create a', 'post', res.schemaName, { parameters: writeParams, requestBody: { ...body(kindRef), required: true } }),
      delete: op(res, 'delete collection of', 'deletecollection', `${META}.Status`),
      ...(res.namespaced ? { parameters: pathParams.slice(1) } : {}),
    },
    [item]: { ...itemOps(res.schemaName), delete: op(res, 'delete a', 'delete', `${META}.Status`, { requestBody: body(REF(`${META}.DeleteOptions`)) }) },
  };
  if (res.namespaced) out[`${base}/${res.resource}`] = { get: op(res, 'list or watch objects of kind', 'list', `${res.schemaName}List`, { parameters: LIST_PARAMS }) };
  if (res.status) out[`${item}/status`] = itemOps(res.schemaName);
  if (res.scale) out[`${item}/scale`] = itemOps('io.k8s.api.autoscaling.v1.Scale', 'Scale');
  return out;
}

/** `api/v1` or `apis/kubevirt.io/v1`: the key of a group-version document. */
function docKey(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function hashOf(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
}

/** The OpenAPI documents of one registry, built on first use and then kept (the registry is fixed). */
export class OpenApiDocuments {
  private readonly registry: ResourceRegistry;
  private schemasIndex: SchemaIndex | undefined;
  private typedView: Typed | undefined;
  private readonly v3 = new Map<string, { doc: Json; hash: string }>();
  private v2: Json | undefined;

  constructor(registry: ResourceRegistry) {
    this.registry = registry;
  }

  /** The schema catalogue (built lazily: most test servers never need it). */
  get schemas(): SchemaIndex {
    this.schemasIndex ??= new SchemaIndex(this.registry);
    return this.schemasIndex;
  }

  /** The schemas as field ownership sees them (managed fields, server-side apply). */
  get typed(): Typed {
    this.typedView ??= new Typed(this.schemas);
    return this.typedView;
  }

  private groupDoc(key: string): { doc: Json; hash: string } | undefined {
    const hit = this.v3.get(key);
    if (hit) return hit;
    const resources = this.registry.all.filter((r) => docKey(r.group, r.version) === key);
    if (resources.length === 0) return undefined;
    const paths: Record<string, Json> = {};
    for (const r of resources) Object.assign(paths, resourcePaths(r));
    const roots = resources.flatMap((r) => [r.schemaName, `${r.schemaName}List`]);
    roots.push(`${META}.Status`, `${META}.DeleteOptions`, `${META}.Patch`, `${META}.WatchEvent`);
    if (resources.some((r) => r.scale)) roots.push('io.k8s.api.autoscaling.v1.Scale');
    const schemas = Object.fromEntries([...this.schemas.closure(roots)].sort(([a], [b]) => (a < b ? -1 : 1)));
    const doc: Json = { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'unversioned' }, paths, components: { schemas } };
    const entry = { doc, hash: hashOf(doc) };
    this.v3.set(key, entry);
    return entry;
  }

  /** `/openapi/v3`: every group-version document with its hashed URL. */
  v3Index(): Json {
    const paths: Record<string, Json> = {};
    for (const { group, version } of this.registry.groupVersions()) {
      const key = docKey(group, version);
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${this.groupDoc(key)!.hash}` };
    }
    return { paths };
  }

  /** `/openapi/v3/<key>`, undefined when no such group version is served. */
  v3Document(key: string): Json | undefined {
    return this.groupDoc(key)?.doc;
  }

  /** `/openapi/v2`: Swagger 2.0 with every served definition and path. */
  v2Document(): Json {
    if (this.v2) return this.v2;
    const paths: Record<string, Json> = {};
    const definitions: Record<string, unknown> = {};
    for (const { group, version } of this.registry.groupVersions()) {
      const doc = this.groupDoc(docKey(group, version))!.doc;
      Object.assign(paths, toV2(pathsToV2(doc.paths as Record<string, Json>)));
      Object.assign(definitions, toV2((doc.components as { schemas: Record<string, Schema> }).schemas));
    }
    this.v2 = { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths, definitions };
    return this.v2;
  }
}

/** v3 → Swagger 2.0: refs point at `#/definitions/`, single-`allOf` wrappers become plain refs. */
function toV2<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Json;
      if (Array.isArray(o.allOf) && o.allOf.length === 1 && !o.properties) {
        const { allOf, default: _d, ...rest } = o;
        return { ...rest, ...(allOf[0] as Json) };
      }
    }
    return v;
  }).replaceAll('#/components/schemas/', '#/definitions/')) as T;
}


/** Swagger 2.0 operations: typed parameters in place of schemas, the body as a `body` parameter. */
function pathsToV2(paths: Record<string, Json>): Record<string, Json> {
  const param = (p: Json): Json => {
    const { schema, ...rest } = p as Json & { schema?: Json };
    return { ...rest, ...(schema ?? {}) };
  };
  const operation = (o: Json): Json => {
    const { requestBody, responses, parameters, ...rest } = o as Json & { requestBody?: Json; responses?: Record<string, Json>; parameters?: Json[] };
    const params = (parameters ?? []).map(param);
    const content = requestBody?.content as Record<string, { schema: Json }> | undefined;
    if (content) params.unshift({ name: 'body', in: 'body', required: true, schema: Object.values(content)[0]!.schema });
    const out: Json = { ...rest, consumes: content ? Object.keys(content) : ['*/*'], produces: ['application/json', 'application/yaml'], schemes: ['https'] };
    if (params.length > 0) out.parameters = params;
    out.responses = Object.fromEntries(Object.entries(responses ?? {}).map(([code, r]) => {
      const c = r.content as Record<string, { schema: Json }> | undefined;
      return [code, c ? { description: r.description, schema: Object.values(c)[0]!.schema } : { description: r.description }];
    }));
    return out;
  };
  const out: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    out[path] = Object.fromEntries(Object.entries(item).map(([k, v]) => [k, k === 'parameters' ? (v as Json[]).map(param) : operation(v as Json)]));
  }
  return out;
}
