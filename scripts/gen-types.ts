/**
 * `npm run gen:types [-- --spec PATH] [-- --out PATH]`: generates `shared/api/kubevirt.gen.ts`, TypeScript
 * interfaces for every definition reachable from the KubeVirt objects this project reads and
 * writes, from KubeVirt's own OpenAPI (Swagger 2.0) spec. The spec itself stays outside the
 * project (default `../shared/kubevirt/api/swagger.json` beside the checkout).
 *
 * Mapping rules (the generated file repeats them in its header):
 * - names drop the Go package prefix (`v1.VirtualMachineInstanceSpec` → `VirtualMachineInstanceSpec`);
 *   when two reachable definitions share a short name, KubeVirt's `v1` keeps it and the other gets
 *   its package as a prefix (`CorePersistentVolumeClaimVolumeSource`, `V1beta1DataVolumeSource`);
 * - `required` fields are mandatory, everything else optional;
 * - string enums become unions of literals; maps become `Record<string, T>`; `int-or-string` and
 *   quantities become `string | number`; `["string","null"]` becomes `string | null`;
 * - objects without properties (KubeVirt's marker types such as `InterfaceBridge`) become
 *   `Record<string, unknown>`;
 * - descriptions become TSDoc.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The part of a Swagger 2.0 schema object the generator understands. */
export interface SchemaObject {
  readonly description?: string;
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly enum?: readonly unknown[];
  readonly $ref?: string;
  readonly items?: SchemaObject;
  readonly properties?: Readonly<Record<string, SchemaObject>>;
  readonly additionalProperties?: SchemaObject | boolean;
  readonly required?: readonly string[];
}

/** The part of a Swagger 2.0 document the generator reads. */
export interface SwaggerSpec {
  readonly swagger?: string;
  readonly definitions: Readonly<Record<string, SchemaObject>>;
}

/** Definitions the project uses directly; everything they reference is generated too. */
export const ROOT_DEFINITIONS: readonly string[] = [
  'v1.VirtualMachineInstance',
  'v1.VirtualMachineInstanceList',
  'v1.VirtualMachine',
  'v1.VirtualMachineList',
  'v1.VirtualMachineInstanceMigration',
  'v1.VirtualMachineInstanceMigrationList',
  'v1.KubeVirt',
  'v1.KubeVirtList',
  'v1alpha1.MigrationPolicy',
  'v1alpha1.MigrationPolicyList',
  'v1.VirtualMachineInstanceReplicaSet',
  'v1.VirtualMachineInstanceReplicaSetList',
  'v1beta1.VirtualMachinePool',
  'v1beta1.VirtualMachinePoolList',
  'v1beta1.VirtualMachineInstancetype',
  'v1beta1.VirtualMachineClusterInstancetype',
  'v1beta1.VirtualMachinePreference',
  'v1beta1.VirtualMachineClusterPreference',
  // The spec has no CDI `v1beta1.DataVolume` envelope (only its spec and sources), so the
  // envelope and its status are written by hand in shared/api/data-volume.ts.
  'v1beta1.DataVolumeSpec',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Status',
  'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
];

/** Prefix for a package's short names when they collide with KubeVirt v1's. */
const COLLISION_PREFIX: Readonly<Record<string, string>> = {
  'k8s.io.api.core.v1': 'Core',
  'k8s.io.apimachinery.pkg.apis.meta.v1': 'Meta',
  v1beta1: 'V1beta1',
  v1alpha1: 'V1alpha1',
};

/**
 * Definitions whose TypeScript shape is not what their schema says: wire formats the schema
 * describes loosely.
 */
const SPECIAL_TYPES: Readonly<Record<string, string>> = {
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'string | number',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'string | number',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': 'string',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Duration': 'string',
};

const REF_PREFIX = '#/definitions/';

function refName(ref: string): string {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${ref} (only ${REF_PREFIX}… is understood)`);
  return ref.slice(REF_PREFIX.length);
}

function splitName(definition: string): { pkg: string; short: string } {
  const dot = definition.lastIndexOf('.');
  return { pkg: definition.slice(0, dot), short: definition.slice(dot + 1) };
}

/** Every definition reachable from `roots` through `$ref`, sorted. Throws on a dangling ref. */
export function reachableDefinitions(spec: SwaggerSpec, roots: readonly string[]): string[] {
  const seen = new Set<string>();
  const pending = [...roots];
  const visit = (schema: SchemaObject | undefined): void => {
    if (!schema) return;
    if (schema.$ref) pending.push(refName(schema.$ref));
    visit(schema.items);
    if (typeof schema.additionalProperties === 'object') visit(schema.additionalProperties);
    for (const prop of Object.values(schema.properties ?? {})) visit(prop);
  };
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (seen.has(name)) continue;
    const def = spec.definitions[name];
    if (!def) throw new Error(`definition ${name} is referenced but missing from the spec`);
    seen.add(name);
    visit(def);
  }
  return [...seen].sort();
}

/** Maps each definition to its TypeScript name (see the collision rule in the file header). */
export function typeNames(definitions: readonly string[]): Map<string, string> {
  const byShort = new Map<string, string[]>();
  for (const def of definitions) {
    const { short } = splitName(def);
    byShort.set(short, [...(byShort.get(short) ?? []), def]);
  }
  const names = new Map<string, string>();
  for (const [short, defs] of byShort) {
    for (const def of defs) {
      const { pkg } = splitName(def);
      if (defs.length === 1 || pkg === 'v1') {
        names.set(def, short);
        continue;
      }
      const prefix = COLLISION_PREFIX[pkg];
      if (!prefix) throw new Error(`${def} collides with ${defs.join(', ')} and package ${pkg} has no prefix`);
      names.set(def, prefix + short);
    }
  }
  return names;
}

function tsdoc(description: string | undefined, indent: string): string {
  if (!description?.trim()) return '';
  // `*/` would end the comment early; KubeVirt descriptions contain globs like `kubevirt.io/*`.
  const lines = description.trim().replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function literal(value: unknown): string {
  return JSON.stringify(value);
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The TypeScript type expression for one schema. */
function typeOf(schema: SchemaObject, names: ReadonlyMap<string, string>, where: string): string {
  if (schema.$ref) {
    const name = names.get(refName(schema.$ref));
    if (!name) throw new Error(`${where}: unresolved ${schema.$ref}`);
    return name;
  }
  const types = typeof schema.type === 'string' ? [schema.type] : [...(schema.type ?? [])];
  if (types.length > 1) {
    const mapped = [...new Set(types.map((t) => typeOf({ ...schema, type: t }, names, where)))];
    return mapped.join(' | ');
  }
  const [type] = types;
  if (schema.format === 'int-or-string') return 'string | number';
  if (schema.enum && schema.enum.length > 0 && (type === 'string' || type === undefined)) {
    return schema.enum.map(literal).join(' | ');
  }
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (!schema.items) throw new Error(`${where}: array without items`);
      const item = typeOf(schema.items, names, `${where}[]`);
      return item.includes(' ') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
    case undefined: {
      const extra = schema.additionalProperties;
      if (typeof extra === 'object') return `Record<string, ${typeOf(extra, names, `${where}{}`)}>`;
      if (schema.properties) throw new Error(`${where}: inline object with properties is not supported`);
      return 'Record<string, unknown>';
    }
    default:
      throw new Error(`${where}: unsupported type ${String(type)}`);
  }
}

function renderDefinition(def: string, schema: SchemaObject, names: ReadonlyMap<string, string>): string {
  const name = names.get(def) ?? def;
  const doc = tsdoc(schema.description, '');
  const special = SPECIAL_TYPES[def];
  if (special) return `${doc}export type ${name} = ${special};\n`;
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return `${doc}export type ${name} = ${typeOf(schema, names, def)};\n`;
  const required = new Set(schema.required ?? []);
  const body = props
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([prop, propSchema]) => {
      const optional = required.has(prop) ? '' : '?';
      const type = typeOf(propSchema, names, `${def}.${prop}`);
      return `${tsdoc(propSchema.description, '  ')}  ${propertyKey(prop)}${optional}: ${type};\n`;
    })
    .join('');
  return `${doc}export interface ${name} {\n${body}}\n`;
}

/** The full text of `shared/api/kubevirt.gen.ts` for a spec. Deterministic: same spec, same bytes. */
export function generateKubevirtTypes(spec: SwaggerSpec, roots: readonly string[] = ROOT_DEFINITIONS): string {
  if (!spec || typeof spec.definitions !== 'object') throw new Error('not a Swagger 2.0 spec: no "definitions" object');
  const defs = reachableDefinitions(spec, roots);
  const names = typeNames(defs);
  const header = [
    '// Code generated by scripts/gen-types.ts from KubeVirt\'s OpenAPI spec (swagger.json). DO NOT EDIT.',
    '// Regenerate with `npm run gen:types`; test/api checks this file is up to date with the spec.',
    `// ${defs.length} definitions reachable from: ${roots.join(', ')}.`,
    '// Names drop the Go package; on a clash KubeVirt v1 keeps the short name and the other package',
    '// gets a prefix (Core…, Meta…, V1beta1…). Quantities and int-or-string are `string | number`;',
    '// timestamps are RFC 3339 strings; objects without declared fields are `Record<string, unknown>`.',
    '/* eslint-disable */',
    '',
  ].join('\n');
  const body = defs
    .map((def) => ({ def, name: names.get(def) ?? def }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ def }) => renderDefinition(def, spec.definitions[def] ?? {}, names))
    .join('\n');
  return `${header}\n${body}`;
}

/** Repo root, from this file's location (scripts/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the spec is looked for when `--spec` is not given. */
export const DEFAULT_SPEC = resolve(repoRoot, '../shared/kubevirt/api/swagger.json');
/** Where the generated file goes. */
export const GENERATED_FILE = resolve(repoRoot, 'shared/api/kubevirt.gen.ts');

/** Reads and parses a spec file, with errors that name the file. */
export function readSpec(path: string): SwaggerSpec {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `KubeVirt OpenAPI spec not found at ${path}; pass --spec PATH (KubeVirt's api/openapi-spec/swagger.json)`
        : `cannot read the KubeVirt OpenAPI spec at ${path}: ${(err as Error).message}`,
    );
  }
  try {
    return JSON.parse(text) as SwaggerSpec;
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
}

function parseArgs(argv: readonly string[]): { spec: string; out: string } {
  let spec = DEFAULT_SPEC;
  let out = GENERATED_FILE;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if ((arg === '--spec' || arg === '--out') && value !== undefined) {
      if (arg === '--spec') spec = resolve(value);
      else out = resolve(value);
      i++;
    } else if (arg?.startsWith('--spec=')) spec = resolve(arg.slice('--spec='.length));
    else if (arg?.startsWith('--out=')) out = resolve(arg.slice('--out='.length));
    else throw new Error(`unknown argument ${arg ?? ''}; usage: npm run gen:types -- [--spec PATH] [--out PATH]`);
  }
  return { spec, out };
}

function main(): void {
  try {
    const { spec, out } = parseArgs(process.argv.slice(2));
    const text = generateKubevirtTypes(readSpec(spec));
    writeFileSync(out, text);
    const count = (text.match(/^export (?:interface|type) /gm) ?? []).length;
    process.stdout.write(`wrote ${out}: ${count} types, ${text.length} bytes, from ${spec}\n`);
  } catch (err) {
    process.stderr.write(`gen:types: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

if (import.meta.main) main();
