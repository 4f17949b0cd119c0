/**
 * `npm run gen:differential [-- --oracle DIR] [-- --only NAME…]`: regenerates KubeVirt's side of
 * every case of the differential corpus (test/differential/cases/<case>/, docs/fidelity.md) with
 * KubeVirt's own template service, `render-oracle` (KubeVirt's `RenderLaunchManifest` after
 * virt-api's VMI defaulting, built from KubeVirt's source outside this project).
 *
 * For each case it runs `render-oracle -f vmi.yaml --objects objects.yaml --seed 1 -o json
 * --vmi-out …` and writes `kubevirt-pod.json` (the launcher pod), `kubevirt-vmi.yaml` (the VMI as
 * virt-api's mutating webhook leaves it) and `meta.json` (the KubeVirt commit, the seed, the
 * arguments); where KubeVirt refuses to render, `kubevirt-error.txt` (its message) instead of the
 * pod. Deterministic: the one random field (the launcher's `--qemu-timeout` jitter) comes from the
 * fixed seed, and Go writes map keys sorted. Without the oracle it says so in one line, exit 1.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fileURLToPath } from 'node:url';

/** The KubeVirt commit the corpus was generated from (the commit the oracle is built at). */
export const KUBEVIRT_COMMIT = 'd923fdb815cd2016ddaebdaaa51db04133576d72';
/** `--seed`: fixes the launcher's `--qemu-timeout` jitter. */
export const SEED = 1;
/** What KubeVirt prefixes a render error with (`services.FailedToRenderLaunchManifestErrFormat`). */
const RENDER_ERROR = 'failed to render launch manifest: ';
const CASES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'differential', 'cases');
const DEFAULT_REGISTRY = 'quay.io/kubevirt';
const DEFAULT_TAG = 'v1.9.0';

interface Args {
  readonly oracle: string | undefined;
  readonly only: readonly string[];
}

function parseArgs(argv: readonly string[]): Args {
  let oracle = process.env.KV_ORACLE || undefined;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--oracle') oracle = argv[++i];
    else if (a === '--only') only.push(argv[++i] ?? '');
    else throw new Error(`unknown argument '${a}' (usage: gen:differential [--oracle DIR] [--only CASE]…)`);
  }
  return { oracle, only };
}

/** The render-oracle binary under DIR (`DIR/bin/render-oracle` as the oracle build lays it out, or `DIR/render-oracle`). */
export function findRenderOracle(dir: string): string | undefined {
  return [join(dir, 'bin', 'render-oracle'), join(dir, 'render-oracle')].find((p) => existsSync(p));
}

/** What a case asks of the oracle beyond the defaults (`case.json`): e.g. `--no-vm` for the WFFC temporary pod. */
export interface CaseOptions {
  readonly renderOracleArgs?: readonly string[];
}

export function caseOptions(dir: string): CaseOptions {
  const f = join(dir, 'case.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as CaseOptions) : {};
}

/**
 * The launcher image virt-operator would give virt-controller for the case's KubeVirt CR
 * (`<imageRegistry>/virt-launcher:<imageTag>`), and the sidecar shim image likewise: the same
 * images our cluster config derives from that CR.
 */
export function imagesFor(objectsYaml: string): { launcher: string; sidecarShim: string } {
  const kv = parseAllDocuments(objectsYaml)
    .map((d) => d.toJS() as { kind?: string; spec?: { imageRegistry?: string; imageTag?: string } } | null)
    .find((o) => o?.kind === 'KubeVirt');
  const registry = kv?.spec?.imageRegistry || DEFAULT_REGISTRY;
  const tag = kv?.spec?.imageTag || DEFAULT_TAG;
  return { launcher: `${registry}/virt-launcher:${tag}`, sidecarShim: `${registry}/sidecar-shim:${tag}` };
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(bin: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * virt-api's defaulting gives a VMI without `spec.domain.firmware.uuid` a random one (not from the
 * seeded generator): replaced, wherever it occurs, by one derived from the case name, so that a
 * regeneration is byte for byte the same. It is the one random value besides the qemu timeout.
 */
export function stableFirmwareUuid(name: string, written: string, vmi: string, pod: string): { vmi: string; pod: string } {
  const random = /^\s+uuid: ([0-9a-f-]{36})$/m.exec(vmi)?.[1];
  if (!random || written.includes(random)) return { vmi, pod };
  const h = createHash('sha1').update(`differential/${name}`).digest('hex');
  const stable = `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  return { vmi: vmi.split(random).join(stable), pod: pod.split(random).join(stable) };
}

/**
 * KubeVirt appends a persistent-reservation VMI's anti-affinity terms (`pr.kubevirt.io/<claim
 * UID>`) in Go map order, which changes from run to run: sorted by label key, so that a
 * regeneration is the same. The pod is re-serialised only then, as Go writes it (2-space indent,
 * `<`, `>`, `&` escaped).
 */
export function sortedReservationTerms(podJson: string): string {
  const pod = JSON.parse(podJson) as { spec?: { affinity?: { podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { labelSelector?: { matchExpressions?: { key: string }[] } }[] } } } };
  const terms = pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const key = (t: NonNullable<typeof terms>[number]) => {
    const k = t.labelSelector?.matchExpressions?.length === 1 ? t.labelSelector.matchExpressions[0]!.key : '';
    return k.startsWith('pr.kubevirt.io/') ? k : undefined;
  };
  if (!terms || terms.filter((t) => key(t) !== undefined).length < 2) return podJson;
  let start = terms.length;
  while (start > 0 && key(terms[start - 1]!) !== undefined) start--;
  terms.push(...terms.splice(start).sort((a, b) => key(a)!.localeCompare(key(b)!)));
  return `${JSON.stringify(pod, null, 2).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')}\n`;
}

type Outcome = { kind: 'pod' } | { kind: 'error'; message: string };

async function generate(bin: string, name: string, scratch: string): Promise<Outcome> {
  const dir = join(CASES_DIR, name);
  const objectsYaml = existsSync(join(dir, 'objects.yaml')) ? readFileSync(join(dir, 'objects.yaml'), 'utf8') : '';
  const hasObjects = parseAllDocuments(objectsYaml).some((d) => d.toJS() != null);
  const images = imagesFor(objectsYaml);
  const extra = caseOptions(dir).renderOracleArgs ?? [];
  const vmiOut = join(scratch, `${name}.yaml`);
  // Relative paths in what meta.json records, so the file does not depend on where it ran.
  const recorded = ['-f', 'vmi.yaml', ...(hasObjects ? ['--objects', 'objects.yaml'] : []), '--seed', String(SEED), '-o', 'json', '--launcher-image', images.launcher, '--sidecar-shim-image', images.sidecarShim, ...extra];
  const res = await run(bin, [...recorded, '--vmi-out', vmiOut], dir);
  const meta = { kubevirtCommit: KUBEVIRT_COMMIT, seed: SEED, renderOracle: [...recorded, '--vmi-out', 'kubevirt-vmi.yaml'] };
  const remove = (f: string) => rmSync(join(dir, f), { force: true });
  if (res.code === 0) {
    const stable = stableFirmwareUuid(name, readFileSync(join(dir, 'vmi.yaml'), 'utf8'), readFileSync(vmiOut, 'utf8'), sortedReservationTerms(res.stdout));
    writeFileSync(join(dir, 'kubevirt-pod.json'), stable.pod);
    writeFileSync(join(dir, 'kubevirt-vmi.yaml'), `# ${name}: the VMI after virt-api's defaulting (render-oracle --vmi-out, KubeVirt ${KUBEVIRT_COMMIT})\n${stable.vmi}`);
    writeFileSync(join(dir, 'meta.json'), `${JSON.stringify({ ...meta, outcome: 'pod' }, null, 2)}\n`);
    remove('kubevirt-error.txt');
    return { kind: 'pod' };
  }
  // KubeVirt's own refusal is an expected outcome; anything else (a bad case file, a crash) is not.
  const line = res.stderr.split('\n').find((l) => l.includes(RENDER_ERROR));
  if (res.code === 1 && line) {
    const message = line.slice(line.indexOf(RENDER_ERROR));
    writeFileSync(join(dir, 'kubevirt-error.txt'), `${message}\n`);
    writeFileSync(join(dir, 'meta.json'), `${JSON.stringify({ ...meta, outcome: 'error' }, null, 2)}\n`);
    remove('kubevirt-pod.json');
    remove('kubevirt-vmi.yaml');
    return { kind: 'error', message };
  }
  throw new Error(`${name}: render-oracle exited ${res.code}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
}

async function main(argv: readonly string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`gen:differential: ${(err as Error).message}\n`);
    return 2;
  }
  const bin = args.oracle ? findRenderOracle(resolve(args.oracle)) : undefined;
  if (!bin) {
    process.stderr.write(
      args.oracle
        ? `gen:differential: no render-oracle under ${args.oracle} (expected ${join(args.oracle, 'bin', 'render-oracle')}); build KubeVirt's oracle there first (docs/fidelity.md)\n`
        : 'gen:differential: no KubeVirt oracle: set KV_ORACLE=<dir> or pass --oracle <dir> (a folder holding bin/render-oracle; docs/fidelity.md)\n',
    );
    return 1;
  }
  const names = readdirSync(CASES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(CASES_DIR, d.name, 'vmi.yaml')))
    .map((d) => d.name)
    .filter((n) => args.only.length === 0 || args.only.includes(n))
    .sort();
  const missing = args.only.filter((n) => !names.includes(n));
  if (missing.length > 0) {
    process.stderr.write(`gen:differential: no such case: ${missing.join(', ')}\n`);
    return 2;
  }
  process.stdout.write(`gen:differential: ${names.length} cases with ${bin} (KubeVirt ${KUBEVIRT_COMMIT.slice(0, 12)}, seed ${SEED})\n`);
  const scratch = mkdtempSync(join(tmpdir(), 'gen-differential-'));
  let pods = 0;
  const refused: string[] = [];
  const failed: string[] = [];
  try {
    // Two at a time: each run is a short process; more buys nothing on a small machine.
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const i = next++;
        const name = names[i]!;
        try {
          const out = await generate(bin, name, scratch);
          if (out.kind === 'pod') pods++;
          else refused.push(name);
          process.stdout.write(`[${String(i + 1).padStart(3)}/${names.length}] ${name}: ${out.kind === 'pod' ? 'pod' : `KubeVirt refuses: ${out.message}`}\n`);
        } catch (err) {
          failed.push(name);
          process.stderr.write(`[${String(i + 1).padStart(3)}/${names.length}] ${(err as Error).message}\n`);
        }
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(`gen:differential: ${pods} pods, ${refused.length} refusals${failed.length ? `, ${failed.length} FAILED (${failed.join(', ')})` : ''}\n`);
  return failed.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
