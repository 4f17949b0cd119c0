/**
 * `npm run build`: one minified ESM bundle per deployable entry, `dist/<name>/index.mjs` (+ source
 * map), the AWS SDK bundled in (docs/platform.md: bundling it cold-starts faster than loading the
 * runtime's copy). `dist/manifest.json` records what was built, its size, and what was missing.
 *
 * Entries are written by several people at once, so a missing entry file is reported (one line
 * each) and skipped; only `--strict` turns a missing entry into a failure. A build error in an
 * entry that exists always fails.
 *
 *   node scripts/build.ts [--strict] [--only=vmi,vm] [--lambdas]
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { build, type BuildOptions as EsbuildOptions, type Plugin } from 'esbuild';
import { CONTROLLERS } from '../shared/controllers.ts';

/** A deployable entry: `dist/<name>/index.mjs` is built from `entry` (relative to the root). */
export interface BundleEntry {
  readonly name: string;
  readonly entry: string;
  /** Deployed as a Lambda function (CDK `Code.fromAsset('dist/<name>')`, handler `index.handler`). */
  readonly lambda: boolean;
}

/**
 * Every entry of the project. The Lambda ones are what infra/aws deploys: one per registered
 * controller (`functions/<name>/handler.ts`, shared/controllers.ts), then the timer forwarder.
 */
export const ENTRIES: readonly BundleEntry[] = [
  ...CONTROLLERS.map((name) => ({ name, entry: `functions/${name}/handler.ts`, lambda: true })),
  // The requeue-after forwarder (docs/queue.md): its Lambda entry lives beside the queue code.
  { name: 'timer-forwarder', entry: 'shared/queue/timer-forwarder.ts', lambda: true },
  { name: 'relay', entry: 'functions/relay/main.ts', lambda: false },
  { name: 'cli', entry: 'cli/main.ts', lambda: false },
];

/**
 * Node's ESM has no `require`; CommonJS code inside the bundle (parts of the SDK, undici) still
 * calls it, so the bundle makes one from its own URL.
 */
export const ESM_REQUIRE_BANNER = "import{createRequire}from'module';const require=createRequire(import.meta.url);";

/**
 * Module substitutions for the Lambda bundles only (never the relay or CLI, which run where a
 * profile, SSO or a web identity may be the source of credentials).
 *
 * `@aws-sdk/credential-provider-node` (the SDK's default credential chain) → our env-only
 * `defaultProvider` (shared/runtime/env-credentials.ts). Every SDK client's runtime config imports
 * the chain statically, and the chain pulls in the SSO, SSO-OIDC, STS and sign-in clients
 * (`@aws-sdk/nested-clients`) and the ini/process/web-identity/IMDS providers: ~⅓ of a bundle's
 * cold import. In Lambda the runtime puts the role's credentials in `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, the chain's first link, so the answer on AWS is
 * the same (the SDK's own `fromEnv`).
 */
export const LAMBDA_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './shared/runtime/env-credentials.ts',
};

/**
 * Static `import … from 'node:http'` (and every other built-in) becomes `require('node:http')`.
 *
 * Why: Node builds the ES module namespace of a built-in by reading every export once, which runs
 * the lazy getters a plain `require` never touches: `http.WebSocket` loads Node's internal undici,
 * `util.parseArgs`/`util.diff`, `fs.promises`, `process.report`, … In a Lambda bundle (the SDK's
 * ESM files and our node:http client import http, https, crypto, fs, os, process, stream, util,
 * zlib) that was tens of ms of a cold import. With this, esbuild treats each built-in as a
 * CommonJS module loaded through the bundle's `require` (the banner): named imports read the same
 * property of the same object, when used, and the default import is the module object, as before.
 */
export const builtinsViaRequire: Plugin = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_][a-z0-9_/]*$/ }, (args) =>
      args.kind === 'import-statement' && isBuiltin(args.path) ? { path: args.path.replace(/^node:/, ''), namespace: 'builtin-require' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`, loader: 'js' }));
  },
};

/**
 * esbuild settings for the Lambda bundles only.
 *
 * `mainFields: module, main`: with `platform: 'node'` esbuild's default is `main, module`, which
 * for the SDK packages without an exports map (client-sqs, client-dynamodb, lib-dynamodb,
 * util-dynamodb, signature-v4, node-http-handler, …) picks `dist-cjs`: one pre-bundled CommonJS
 * file per package that cannot be tree-shaken and `require()`s `@smithy/core` and `@aws-sdk/core`
 * whole, including the browser user-agent parser `bowser`. Their `dist-es` is the same code as
 * ES modules; the Node variants are the default files (browser ones are only swapped in through
 * the `browser` field, which `platform: 'node'` ignores). Result: about half the bytes, no bowser.
 * Packages with an exports map are unaffected (conditions decide there).
 */
const LAMBDA_ONLY: EsbuildOptions = {
  alias: { ...LAMBDA_ALIASES },
  mainFields: ['module', 'main'],
  plugins: [builtinsViaRequire],
};

/**
 * The esbuild options of one entry (everything but the output file), shared with the bundle
 * benchmark so that it measures what is deployed.
 */
export function bundleOptions(e: BundleEntry, root: string): EsbuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: [join(root, e.entry)],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    sourcemap: true,
    // Source paths in the map relative to the root, not to this machine's checkout.
    sourceRoot: '',
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'silent',
    legalComments: 'none',
    ...(e.lambda ? LAMBDA_ONLY : {}),
  };
}

export interface BuildOptions {
  /** Project root; default the parent of this script's folder. */
  readonly root?: string;
  /** Output folder; default `<root>/dist`. */
  readonly outDir?: string;
  /** Only these entry names. */
  readonly only?: readonly string[];
  /** Fail (throw) when an entry file is missing. */
  readonly strict?: boolean;
  /** Default true. */
  readonly minify?: boolean;
  /** One line per entry; default stdout. Pass `() => {}` to silence. */
  readonly log?: (line: string) => void;
}

export interface BuiltBundle {
  readonly name: string;
  readonly entry: string;
  /** Absolute path of `dist/<name>`: what `lambda.Code.fromAsset` takes. */
  readonly dir: string;
  readonly bytes: number;
  readonly mapBytes: number;
  /** The files it was made of, relative to the root (esbuild's metafile inputs). */
  readonly inputs: readonly string[];
}

export interface BuildResult {
  readonly built: readonly BuiltBundle[];
  readonly missing: readonly BundleEntry[];
  readonly manifestPath: string;
}

/** Builds the bundles. Throws on a build error, and on a missing entry when `strict`. */
export async function buildBundles(opts: BuildOptions = {}): Promise<BuildResult> {
  const root = resolve(opts.root ?? join(import.meta.dirname, '..'));
  const outDir = resolve(opts.outDir ?? join(root, 'dist'));
  const log = opts.log ?? ((line: string): void => void process.stdout.write(line + '\n'));
  const wanted = ENTRIES.filter((e) => opts.only === undefined || opts.only.includes(e.name));
  const unknown = (opts.only ?? []).filter((n) => !ENTRIES.some((e) => e.name === n));
  if (unknown.length > 0) throw new Error(`unknown bundle name(s): ${unknown.join(', ')} (known: ${ENTRIES.map((e) => e.name).join(', ')})`);

  const present = wanted.filter((e) => existsSync(join(root, e.entry)));
  const missing = wanted.filter((e) => !present.includes(e));
  for (const m of missing) log(`missing  ${m.name.padEnd(16)} ${m.entry} does not exist yet — skipped`);
  if (opts.strict === true && missing.length > 0) throw new Error(`--strict: ${missing.length} entry file(s) missing: ${missing.map((m) => m.entry).join(', ')}`);

  const built: BuiltBundle[] = [];
  // One at a time: the machine has 2 cores and esbuild already uses both.
  for (const e of present) {
    const dir = join(outDir, e.name);
    rmSync(dir, { recursive: true, force: true }); // a stale file would change the asset hash
    mkdirSync(dir, { recursive: true });
    const outfile = join(dir, 'index.mjs');
    const result = await build({ ...bundleOptions(e, root), outfile, minify: opts.minify ?? true, metafile: true }).catch((err: unknown) => {
      throw new Error(`bundle ${e.name} (${e.entry}) failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
    const inputs = Object.keys(result.metafile.inputs).sort();
    const b: BuiltBundle = { name: e.name, entry: e.entry, dir, bytes: statSync(outfile).size, mapBytes: statSync(outfile + '.map').size, inputs };
    built.push(b);
    log(`built    ${e.name.padEnd(16)} ${relative(root, outfile)}  ${kib(b.bytes)} (map ${kib(b.mapBytes)})`);
  }

  mkdirSync(outDir, { recursive: true });
  const manifestPath = join(outDir, 'manifest.json');
  const manifest = {
    bundles: Object.fromEntries(built.map((b) => [b.name, { entry: b.entry, file: `${b.name}/index.mjs`, bytes: b.bytes, mapBytes: b.mapBytes, inputs: b.inputs.length }])),
    missing: missing.map((m) => ({ name: m.name, entry: m.entry })),
  };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  return { built, missing, manifestPath };
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',').filter(Boolean);
  const lambdas = args.includes('--lambdas') ? ENTRIES.filter((e) => e.lambda).map((e) => e.name) : undefined;
  try {
    const r = await buildBundles({ strict: args.includes('--strict'), ...((only ?? lambdas) !== undefined ? { only: only ?? lambdas } : {}) });
    process.stdout.write(`${r.built.length} bundle(s) built, ${r.missing.length} entry file(s) missing; manifest ${relative(process.cwd(), r.manifestPath)}\n`);
  } catch (err) {
    process.stderr.write(`build: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
