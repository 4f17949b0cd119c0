/**
 * `node scripts/gen-openapi.ts [--version v1.36.3]`: writes
 * `sandbox/apiserver/openapi/builtin-schemas.generated.json`, the OpenAPI v3 schemas of the
 * built-in kinds the sandbox API server serves (and every definition they reference), taken from
 * the OpenAPI that Kubernetes publishes in its source tree (`api/openapi-spec/v3/`), fetched as
 * the `k8s.io/kubernetes` module through the Go module proxy (`go mod download`).
 *
 * The emulator builds its own paths, so only `components.schemas` is kept, trimmed to what is
 * reachable from the served kinds. Run it again after adding a built-in resource.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_RESOURCES } from '../sandbox/apiserver/resources.ts';

const DEFAULT_VERSION = 'v1.36.3';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'sandbox/apiserver/openapi/builtin-schemas.generated.json');

/** Definitions the server's own bodies use besides the served kinds. */
const EXTRA_ROOTS = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
  'io.k8s.api.policy.v1.Eviction',
  'io.k8s.api.autoscaling.v1.Scale',
  'io.k8s.api.core.v1.Binding',
];

function moduleDir(version: string): string {
  const out = execFileSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], { encoding: 'utf8', cwd: '/tmp' });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

function refsOf(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsOf(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') into.add(v.replace('#/components/schemas/', ''));
      else refsOf(v, into);
    }
  }
}

function main(): void {
  const at = process.argv.indexOf('--version');
  const version = at >= 0 ? process.argv[at + 1]! : DEFAULT_VERSION;
  const dir = join(moduleDir(version), 'api/openapi-spec/v3');
  const all: Record<string, unknown> = {};
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const doc = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { components?: { schemas?: Record<string, unknown> } };
    Object.assign(all, doc.components?.schemas ?? {});
  }
  const roots = [...BUILTIN_RESOURCES.flatMap((r) => [r.schemaName, `${r.schemaName}List`]), ...EXTRA_ROOTS];
  const keep = new Set<string>();
  const todo = [...roots];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (keep.has(name)) continue;
    if (!(name in all)) throw new Error(`${name} is not in Kubernetes ${version}'s OpenAPI`);
    keep.add(name);
    const refs = new Set<string>();
    refsOf(all[name], refs);
    todo.push(...refs);
  }
  const schemas = Object.fromEntries([...keep].sort().map((n) => [n, all[n]]));
  const body = { source: `k8s.io/kubernetes@${version} api/openapi-spec/v3 (components.schemas, trimmed to the served kinds)`, schemas };
  writeFileSync(OUT, JSON.stringify(body, null, 1) + '\n');
  process.stdout.write(`${OUT}: ${keep.size} definitions\n`);
}

main();
