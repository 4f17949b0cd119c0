/**
 * Every OpenAPI v3 schema the emulator knows, under the definition names the real server uses:
 * the built-in kinds from the generated file (Kubernetes' published OpenAPI, see
 * scripts/gen-openapi.ts) and each served CRD version's `openAPIV3Schema`, completed the way the
 * real server publishes a CRD (metadata as ObjectMeta, apiVersion/kind described, the
 * group-version-kind extension, a List kind). OpenAPI documents, field validation, pruning and
 * server-side apply all read from here.
 */
import { readFileSync } from 'node:fs';
import { loadCrds } from '../crds.ts';
import { crdSchemaName, type ResourceInfo, type ResourceRegistry } from '../resources.ts';
import { isObject } from '../types.ts';

/** An OpenAPI v3 schema object (only the parts the emulator reads are typed). */
export interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  $ref?: string;
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
  [key: string]: unknown;
}

const REF_PREFIX = '#/components/schemas/';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const API_VERSION_DOC = 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC = 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

let builtin: Record<string, Schema> | undefined;
function builtinSchemas(): Record<string, Schema> {
  builtin ??= (JSON.parse(readFileSync(new URL('./builtin-schemas.generated.json', import.meta.url), 'utf8')) as { schemas: Record<string, Schema> }).schemas;
  return builtin;
}

function ref(name: string): Schema {
  return { $ref: `${REF_PREFIX}${name}` };
}

function gvk(res: Pick<ResourceInfo, 'group' | 'version' | 'kind'>, kind = res.kind): Schema['x-kubernetes-group-version-kind'] {
  return [{ group: res.group, kind, version: res.version }];
}

/** A CRD version's schema as the real server publishes it. */
function publishedCrdSchema(res: ResourceInfo, schema: Schema): Schema {
  const properties = { ...(schema.properties ?? {}) };
  properties.apiVersion = { description: API_VERSION_DOC, type: 'string' };
  properties.kind = { description: KIND_DOC, type: 'string' };
  properties.metadata = { allOf: [ref(OBJECT_META)], description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" };
  return { ...schema, type: 'object', properties, 'x-kubernetes-group-version-kind': gvk(res) };
}

function listSchema(res: ResourceInfo): Schema {
  return {
    description: `${res.kind}List is a list of ${res.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { description: API_VERSION_DOC, type: 'string' },
      items: { description: `List of ${res.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`, type: 'array', items: ref(res.schemaName) },
      kind: { description: KIND_DOC, type: 'string' },
      metadata: { allOf: [ref(LIST_META)], description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds' },
    },
    'x-kubernetes-group-version-kind': gvk(res, res.listKind),
  };
}

/** The schema catalogue of one registry. */
export class SchemaIndex {
  private readonly defs = new Map<string, Schema>();
  private readonly byRes = new Map<ResourceInfo, string>();

  constructor(registry: ResourceRegistry) {
    for (const [name, s] of Object.entries(builtinSchemas())) this.defs.set(name, s);
    const crdSchemas = new Map<string, Schema>();
    for (const crd of loadCrds()) for (const v of crd.versions) crdSchemas.set(crdSchemaName(crd.group, v.name, crd.kind), v.schema as Schema);
    for (const res of registry.all) {
      const raw = crdSchemas.get(res.schemaName);
      if (!res.builtin && raw) {
        this.defs.set(res.schemaName, publishedCrdSchema(res, raw));
        this.defs.set(`${res.schemaName}List`, listSchema(res));
      }
      this.byRes.set(res, res.schemaName);
    }
  }

  /** A definition by name. */
  get(name: string): Schema | undefined {
    return this.defs.get(name);
  }

  /** The schema of a resource's kind (undefined for kinds without one). */
  of(res: ResourceInfo): Schema | undefined {
    return this.defs.get(this.byRes.get(res) ?? res.schemaName);
  }

  private readonly resolved = new WeakMap<Schema, Schema | undefined>();

  /** Follows `$ref` and single-entry `allOf` wrappers to the schema that describes a value (memoised: every write walks these). */
  resolve(s: Schema | undefined): Schema | undefined {
    if (!s) return undefined;
    if (this.resolved.has(s)) return this.resolved.get(s);
    const out = this.resolveUncached(s);
    this.resolved.set(s, out);
    return out;
  }

  private resolveUncached(s: Schema | undefined): Schema | undefined {
    for (let i = 0; s && i < 32; i++) {
      if (typeof s.$ref === 'string') s = this.defs.get(s.$ref.slice(REF_PREFIX.length));
      else if (Array.isArray(s.allOf) && s.allOf.length === 1 && !s.properties && !s.items) s = { ...s.allOf[0], ...omit(s, 'allOf') };
      else return s;
    }
    return s;
  }

  /** `names` and every definition they reference, transitively. */
  closure(names: Iterable<string>): Map<string, Schema> {
    const out = new Map<string, Schema>();
    const todo = [...names];
    while (todo.length > 0) {
      const name = todo.pop()!;
      const s = this.defs.get(name);
      if (!s || out.has(name)) continue;
      out.set(name, s);
      collectRefs(s, todo);
    }
    return out;
  }
}

function omit(s: Schema, key: string): Schema {
  const { [key]: _gone, ...rest } = s;
  return rest;
}

function collectRefs(value: unknown, into: string[]): void {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, into);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(REF_PREFIX)) into.push(v.slice(REF_PREFIX.length));
      else collectRefs(v, into);
    }
  }
}
