/**
 * A small structural validator: walks a parsed YAML/JSON value against a Swagger 2.0 definition
 * and lists what does not fit (unknown fields, missing required fields, wrong JSON types, values
 * outside an enum). Test support only: it shows that what KubeVirt's examples contain is what the
 * generated types declare.
 */
import type { SchemaObject, SwaggerSpec } from '../../scripts/gen-types.ts';

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function accepts(declared: string, actual: string): boolean {
  return declared === actual || (declared === 'number' && actual === 'integer');
}

/** Every mismatch between `value` and `schema`, as `path: problem` lines; empty when it fits. */
export function schemaProblems(spec: SwaggerSpec, schema: SchemaObject, value: unknown, path = '$'): string[] {
  if (schema.$ref) {
    const def = spec.definitions[schema.$ref.replace('#/definitions/', '')];
    if (!def) return [`${path}: dangling ${schema.$ref}`];
    return schemaProblems(spec, def, value, path);
  }
  const actual = jsonType(value);
  if (schema.format === 'int-or-string') {
    return actual === 'string' || actual === 'integer' ? [] : [`${path}: ${actual} is not int-or-string`];
  }
  const declared = typeof schema.type === 'string' ? [schema.type] : [...(schema.type ?? ['object'])];
  if (!declared.some((t) => accepts(t, actual))) return [`${path}: ${actual}, expected ${declared.join('|')}`];
  if (schema.enum && !schema.enum.includes(value)) return [`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`];
  if (actual === 'array' && schema.items) {
    const items = schema.items;
    return (value as unknown[]).flatMap((item, i) => schemaProblems(spec, items, item, `${path}[${i}]`));
  }
  if (actual !== 'object') return [];
  const obj = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const req of schema.required ?? []) if (!(req in obj)) problems.push(`${path}.${req}: required but missing`);
  for (const [key, child] of Object.entries(obj)) {
    const prop = schema.properties?.[key];
    const extra = schema.additionalProperties;
    if (prop) problems.push(...schemaProblems(spec, prop, child, `${path}.${key}`));
    else if (typeof extra === 'object') problems.push(...schemaProblems(spec, extra, child, `${path}.${key}`));
    else if (schema.properties) problems.push(`${path}.${key}: unknown field`);
  }
  return problems;
}
