/**
 * The custom resources the emulator serves, read from the CRD files in `infra/crds/` — the same
 * definitions the real control plane installs, so scope, versions, subresources, printer
 * columns, short names and schemas cannot drift between the two clusters.
 *
 * Parsing ~5 MB of YAML takes over a second on a busy machine, and every test starts an
 * emulator: the parsed definitions are cached as compact JSON in `.cache/`, keyed by a hash of
 * the files, and kept in memory once loaded (one read per process).
 */
import { createHash } from 'node:crypto';
import { globSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isObject } from './types.ts';

/** One `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority: number;
  jsonPath: string;
}

/** A CRD's `subresources.scale`. */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** One served version of a CRD. */
export interface CrdVersion {
  name: string;
  storage: boolean;
  status: boolean;
  scale?: ScaleSubresource;
  columns: PrinterColumn[];
  /** `openAPIV3Schema` as written in the CRD. */
  schema: Record<string, unknown>;
  deprecationWarning?: string;
}

/** What the emulator needs from one CustomResourceDefinition. */
export interface CrdInfo {
  group: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Served versions only, in discovery (priority) order. */
  versions: CrdVersion[];
}

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** Where the CRD files live. */
export const CRD_DIR = join(REPO_ROOT, 'infra/crds');
const CACHE_DIR = join(REPO_ROOT, '.cache');
const CACHE_FORMAT = 1;

// Upstream's version priority: GA > beta > alpha, then higher major, then higher minor.
const VERSION_RE = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
function versionRank(v: string): [number, number, number] {
  const m = VERSION_RE.exec(v);
  if (!m) return [-1, 0, 0];
  const stage = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
  return [stage, Number(m[1]), Number(m[3] ?? 0)];
}

/** Sorts version names the way discovery orders them (preferred first). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [versionRank(a), versionRank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return y[i]! - x[i]!;
  return a < b ? -1 : a > b ? 1 : 0;
}

function str(v: unknown, what: string, file: string): string {
  if (typeof v !== 'string' || v === '') throw new Error(`${file}: ${what} must be a non-empty string`);
  return v;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function toColumns(v: unknown): PrinterColumn[] {
  const cols = Array.isArray(v) ? v.filter(isObject) : [];
  // apiextensions defaulting: a CRD without columns prints NAME and AGE.
  if (cols.length === 0) return [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', priority: 0 }];
  return cols.map((c) => {
    const col: PrinterColumn = { name: String(c.name), type: String(c.type), jsonPath: String(c.jsonPath), priority: typeof c.priority === 'number' ? c.priority : 0 };
    if (typeof c.format === 'string') col.format = c.format;
    if (typeof c.description === 'string') col.description = c.description;
    return col;
  });
}

/** Reads one CRD document into a {@link CrdInfo}. */
export function crdInfoOf(doc: unknown, file: string): CrdInfo {
  if (!isObject(doc) || doc.kind !== 'CustomResourceDefinition' || !isObject(doc.spec)) throw new Error(`${file}: not a CustomResourceDefinition`);
  const spec = doc.spec;
  const names = isObject(spec.names) ? spec.names : {};
  const kind = str(names.kind, 'spec.names.kind', file);
  const versions: CrdVersion[] = [];
  for (const v of Array.isArray(spec.versions) ? spec.versions.filter(isObject) : []) {
    if (v.served !== true) continue;
    const sub = isObject(v.subresources) ? v.subresources : {};
    const schema = isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    const out: CrdVersion = { name: str(v.name, 'version name', file), storage: v.storage === true, status: isObject(sub.status), columns: toColumns(v.additionalPrinterColumns), schema };
    if (isObject(sub.scale)) {
      out.scale = { specReplicasPath: String(sub.scale.specReplicasPath), statusReplicasPath: String(sub.scale.statusReplicasPath) };
      if (typeof sub.scale.labelSelectorPath === 'string') out.scale.labelSelectorPath = sub.scale.labelSelectorPath;
    }
    if (typeof v.deprecationWarning === 'string') out.deprecationWarning = v.deprecationWarning;
    versions.push(out);
  }
  versions.sort((a, b) => compareVersions(a.name, b.name));
  return {
    group: str(spec.group, 'spec.group', file),
    plural: str(names.plural, 'spec.names.plural', file),
    singular: typeof names.singular === 'string' ? names.singular : kind.toLowerCase(),
    kind,
    listKind: typeof names.listKind === 'string' ? names.listKind : `${kind}List`,
    namespaced: spec.scope === 'Namespaced',
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    versions,
  };
}

let loaded: { dir: string; crds: CrdInfo[] } | undefined;

/** Every CRD under `dir` (default `infra/crds/`), parsed once per process and cached on disk. */
export function loadCrds(dir = CRD_DIR): CrdInfo[] {
  if (loaded?.dir === dir) return loaded.crds;
  const files = globSync('**/*.yaml', { cwd: dir }).sort();
  const texts = files.map((f) => readFileSync(join(dir, f), 'utf8'));
  const hash = createHash('sha256');
  hash.update(`format ${CACHE_FORMAT}\n`);
  files.forEach((f, i) => hash.update(`${f}\n${texts[i]!.length}\n`).update(texts[i]!));
  const cacheFile = join(CACHE_DIR, `sandbox-crds-${hash.digest('hex').slice(0, 16)}.json`);
  let crds: CrdInfo[] | undefined;
  try {
    crds = JSON.parse(readFileSync(cacheFile, 'utf8')) as CrdInfo[];
  } catch {
    crds = files.map((f, i) => crdInfoOf(parse(texts[i]!), relative(REPO_ROOT, join(dir, f))));
    try {
      mkdirSync(CACHE_DIR, { recursive: true });
      // Write then rename: parallel test processes never read a half-written cache.
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(crds));
      renameSync(tmp, cacheFile);
    } catch {
      // A read-only checkout still works, only slower.
    }
  }
  loaded = { dir, crds };
  return crds;
}
