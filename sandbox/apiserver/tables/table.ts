/**
 * The meta.k8s.io/v1 Table form of lists, single objects and watch events, which `kubectl get`
 * asks for (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): NAME, then a CRD's
 * additionalPrinterColumns (JSONPath, typed cells, date columns as ages) or a built-in kind's
 * printer columns; every column goes out, kubectl hides priority > 0 unless `-o wide`.
 * `includeObject=None|Metadata|Object` controls what each row carries (default Metadata).
 */
import { badRequest } from '../errors.ts';
import { compileJsonPath, type JsonPath } from '../jsonpath.ts';
import { resourceKey, type PrinterColumn, type ResourceInfo } from '../resources.ts';
import { isObject, type KubeObject } from '../types.ts';
import { BUILTIN_PRINTERS, DEFAULT_PRINTER, type ColumnDefinition, type Printer } from './builtin-printers.ts';
import { ageOf } from './human-duration.ts';

/** What a row carries besides its cells. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

const NAME_COLUMN: ColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

/** `includeObject` from the query (400 for anything else, as upstream). */
export function includeObjectParam(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

function jsonCell(col: PrinterColumn, value: unknown, nowMs: number): unknown {
  switch (col.type) {
    case 'date':
      return typeof value === 'string' ? ageOf(value, nowMs) : null;
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

const compiled = new Map<string, JsonPath>();
function pathOf(source: string): JsonPath {
  let p = compiled.get(source);
  if (!p) compiled.set(source, (p = compileJsonPath(source)));
  return p;
}

function crdPrinter(columns: readonly PrinterColumn[]): Printer {
  return {
    columns: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority })),
    cells: (obj, nowMs) =>
      columns.map((c) => {
        // Only the first match counts, as upstream's convertor (simple paths yield one).
        const found = pathOf(c.jsonPath).evaluate(obj);
        return found.length === 0 ? null : jsonCell(c, found[0], nowMs);
      }),
  };
}

/** The printer of a resource. */
export function printerFor(res: ResourceInfo): Printer {
  if (!res.builtin && res.columns) return crdPrinter(res.columns);
  return BUILTIN_PRINTERS[resourceKey(res)] ?? DEFAULT_PRINTER;
}

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'Object') return obj;
  if (include === 'None') return undefined;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** A Table of `objects` (`listMetadata` from the list: resourceVersion, continue). */
export function toTable(res: ResourceInfo, objects: readonly KubeObject[], nowMs: number, include: IncludeObject, listMetadata: Record<string, unknown> = {}): object {
  const printer = printerFor(res);
  const rows = objects.map((obj) => {
    const cells = [printer.name ? printer.name(obj) : (obj.metadata.name ?? ''), ...printer.cells(obj as Record<string, unknown>, nowMs)];
    const object = rowObject(obj, include);
    return object === undefined ? { cells } : { cells, object };
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMetadata, columnDefinitions: [NAME_COLUMN, ...printer.columns], rows };
}

/** A watch event in Table form: the object becomes a one-row Table (ERROR/BOOKMARK pass through). */
export function tableEvent(res: ResourceInfo, event: { type: string; object: unknown }, nowMs: number, include: IncludeObject): unknown {
  if ((event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') || !isObject(event.object)) return event;
  const obj = event.object as KubeObject;
  return { type: event.type, object: toTable(res, [obj], nowMs, include, { resourceVersion: obj.metadata.resourceVersion }) };
}
