/**
 * KubeVirt's own virt-controller beside ours in docs/benchmarks.md (issue 33): the summary rows
 * its targets are judged by, and a section with every system's figures on both control planes —
 * the e2e burst to Running and the steady rate, the replica set and the drain — the requests per
 * VMI by verb and resource, what virt-controller logged, and the real control plane's Go CPU
 * profiles when they were taken. Pure: reads the results of e2e, replicaset and drain.
 */
import { at, info, num, row, table, type Json, type Row } from './report-format.ts';

const E2E = 'test/bench/e2e.bench.ts';
const RS = 'test/bench/replicaset.bench.ts';
const DRAIN = 'test/bench/drain.bench.ts';
const SYSTEMS = ['baseline', 'serverless', 'kubevirt'] as const;
/** The size issue 33's real-lane targets are judged at. */
const TARGET_VMIS = 1000;

/** Why KubeVirt's column is empty in `lane` (its skip reason, or its failure), else undefined. */
function whyNot(lane: unknown): string | undefined {
  const skipped = at(lane, 'kubevirtSkipped') ?? at(lane, 'skipped');
  if (typeof skipped === 'string') return `skipped: ${skipped}`;
  const failures = at(lane, 'failures');
  if (Array.isArray(failures) && failures.length) return `failed: ${String((failures[0] as Json).error).split('\n')[0]}`;
  return undefined;
}

/** The summary rows of issue 33's targets: ours (serverless) against KubeVirt's on the same run. */
export function kubevirtSummaryRows(results: Json): Row[] {
  const e2e = results[E2E];
  const real = at(e2e, 'real');
  const n = num(real, 'vmis');
  const judged = n !== undefined && n >= TARGET_VMIS;
  const at1000 = (r: Row): Row => (judged || r.met === undefined ? r : { ...r, target: `${r.target} — judged at ${TARGET_VMIS} VMIs, this run had ${n}`, met: undefined });
  const note = (lane: unknown) => (whyNot(lane) ? ` (KubeVirt's ${whyNot(lane)})` : '');
  const v = (lane: unknown, k: string) => num(lane, `ratios.vsKubevirt.serverless.${k}`);
  return [
    at1000(row(`real control plane, ${n ?? 'N'} VMIs: lag after the last create to all Running, KubeVirt's / ours${note(real)}`, v(real, 'lagRunning'), '×', '≥ 1.0× (issue 33; medians of rounds)', (x) => x >= 1)),
    at1000(row(`real control plane, ${n ?? 'N'} VMIs: VMIs/s to Running, ours / KubeVirt's${note(real)}`, v(real, 'vmisPerSecondRunning'), '×', '≥ 1.0× (issue 33)', (x) => x >= 1)),
    row(`emulator, ${num(e2e, 'vmis') ?? 'N'} VMIs: lag after the last create to all Running, KubeVirt's / ours${note(e2e)}`, v(e2e, 'lagRunning'), '×', '≥ 1.0× (issue 33: stays)', (x) => x >= 1),
    row(`API requests per VMI, create → Running (all verbs, our identity), ours / KubeVirt's, real control plane${note(real)}`, v(real, 'requestsPerVmi'), '×', '≤ 1.5× (issue 33)', (x) => x <= 1.5),
    row(`writes per VMI, create → Running, ours / KubeVirt's, real control plane${note(real)}`, v(real, 'writesPerVmi'), '×', '≤ 1.0× (issue 33)', (x) => x <= 1),
    info(`API requests / writes per VMI, ours / KubeVirt's, emulator${note(e2e)}`, v(e2e, 'requestsPerVmi'), `× / ${v(e2e, 'writesPerVmi') ?? '–'}×`, `serverless ${num(e2e, 'medians.serverless.requests.requestsPerVmi') ?? '–'} / KubeVirt ${num(e2e, 'medians.kubevirt.requests.requestsPerVmi') ?? '–'} requests per VMI`),
  ];
}

/** The rows of one lane's burst to Running (medians of rounds), one column per system that ran. */
function burstTable(lane: unknown): string[] {
  const systems = SYSTEMS.filter((s) => at(lane, `medians.${s}`) !== undefined);
  if (systems.length === 0) return ['Not run.', ''];
  const m = (s: string, k: string) => num(lane, `medians.${s}.${k}`);
  const rows: (string | number | undefined)[][] = [
    ['seconds to all Scheduled', ...systems.map((s) => m(s, 'secondsToAllScheduled'))],
    ['seconds to all Running', ...systems.map((s) => m(s, 'secondsToAllRunning'))],
    ['lag after the last create: to all Scheduled / to all Running, s', ...systems.map((s) => `${m(s, 'lagAfterLastCreateScheduledS') ?? '–'} / ${m(s, 'lagAfterLastCreateRunningS') ?? '–'}`)],
    ['VMIs/s to Scheduled / to Running', ...systems.map((s) => `${m(s, 'vmisPerSecondScheduled') ?? '–'} / ${m(s, 'vmisPerSecondRunning') ?? '–'}`)],
    ['API requests per VMI (the identity, all verbs)', ...systems.map((s) => m(s, 'requests.requestsPerVmi'))],
    ['  reads / writes / of which Events', ...systems.map((s) => `${m(s, 'requests.readsPerVmi') ?? '–'} / ${m(s, 'requests.writesPerVmi') ?? '–'} / ${m(s, 'requests.eventWritesPerVmi') ?? '–'}`)],
    ["controller process CPU ms per VMI, to Running", ...systems.map((s) => m(s, 'cpuMsPerVmi'))],
    ['memory KB per VMI (measure below) / peak RSS MB', ...systems.map((s) => `${m(s, 'memory.kbPerVmi') ?? '–'} / ${m(s, 'memory.peakRssMb') ?? '–'}`)],
  ];
  const calls = new Set<string>();
  for (const s of systems) for (const k of Object.keys((at(lane, `medians.${s}.requests.byCall`) as Json | undefined) ?? {})) calls.add(k);
  return [
    table(['burst to Running (medians)', ...systems], rows),
    '',
    table(['requests per VMI by verb and resource', ...systems], [...calls].sort().map((c) => [c, ...systems.map((s) => (at(lane, `medians.${s}.requests.byCall`) as Record<string, number> | undefined)?.[c])])),
    '',
  ];
}

function ratiosTable(lanes: [string, unknown][]): string[] {
  const keys: [string, string][] = [
    ['lagRunning', "lag to all Running: KubeVirt's / ours (≥ 1 = ours shorter)"],
    ['lagScheduled', "lag to all Scheduled: KubeVirt's / ours"],
    ['vmisPerSecondRunning', "VMIs/s to Running: ours / KubeVirt's (≥ 1 = ours faster)"],
    ['requestsPerVmi', "requests per VMI: ours / KubeVirt's (≤ 1.5 the target)"],
    ['writesPerVmi', "writes per VMI: ours / KubeVirt's (≤ 1 the target)"],
    ['cpuMsPerVmi', "controller CPU per VMI: ours / KubeVirt's"],
    ['memoryKbPerVmi', "memory per VMI: ours / KubeVirt's (different measures)"],
  ];
  const cols = lanes.flatMap(([name, lane]) => ['serverless', 'baseline'].map((s) => [`${s}, ${name}`, lane, s] as const));
  return [table(['ratio', ...cols.map(([l]) => l)], keys.map(([k, label]) => [label, ...cols.map(([, lane, s]) => num(lane, `ratios.vsKubevirt.${s}.${k}`))])), ''];
}

function findings(lane: unknown, label: string): string[] {
  const f = (at(lane, 'throughput.kubevirt.kubevirt.logFindings') as { level: string; message: string; count: number }[] | undefined) ?? [];
  const failures = (at(lane, 'failures') as { run: string; error: string }[] | undefined) ?? [];
  const out: string[] = [];
  if (f.length) out.push(`What virt-controller logged at warning level or above during the burst, ${label} (digits shown as N): ${f.map((x) => `${x.count}× ${x.level} "${x.message}"`).join('; ')}.`, '');
  if (failures.length) out.push(`KubeVirt's runs that failed, ${label}: ${failures.map((x) => `${x.run}: ${x.error.split('\n')[0]}`).join('; ')}.`, '');
  return out;
}

/** The Go profiles of the real control plane, per system's median burst: the top by cumulative share. */
function profiles(real: unknown): string[] {
  const out: string[] = [];
  for (const s of SYSTEMS) {
    const p = at(real, `throughput.${s}.controlPlaneProfile`) as Record<string, { cpuSeconds: number; seconds: number; topCum: Record<string, number>; files: string[] }> | undefined;
    if (!p) continue;
    out.push(`Control plane CPU during ${s}'s burst (Go pprof, BENCH_CPU_PROFILE_DIR; merged chunks): ${Object.entries(p).map(([c, x]) => `${c} ${x.cpuSeconds} CPU s in ${x.seconds} s`).join(', ')}. Top by cumulative share, kube-apiserver: ${Object.entries(p['kube-apiserver']?.topCum ?? {}).filter(([f]) => !/^runtime\.|^net\/http\.\(\*conn\)\.serve$/.test(f)).slice(0, 8).map(([f, pct]) => `\`${f}\` ${pct}%`).join(', ') || '–'}.`, '');
  }
  return out;
}

/** The section of docs/benchmarks.md; empty when none of the three rows ran. */
export function kubevirtSection(results: Json): string[] {
  const e2e = results[E2E];
  const rs = results[RS];
  const drain = results[DRAIN];
  if (!e2e && !rs && !drain) return [];
  const out = ["## KubeVirt's virt-controller side by side", ''];
  const apiPath = at(e2e, 'throughput.kubevirt.kubevirt.apiPath');
  out.push(
    "KubeVirt's own virt-controller, unmodified (`KUBEVIRT_VIRT_CONTROLLER` names the binary; test/bench/support/kubevirt.ts), as a third system beside ours: each on a fresh sandbox with the same simulated nodes, out of cluster as identity `kubevirt-controller` (on the real control plane bound to cluster-admin, not to the narrower role virt-operator gives it). It starts, takes the Lease kubevirt/virt-controller and starts its loops before the clock starts. Its requests are the API server's count for its identity (the audit log on the real control plane); its CPU is its process's (/proc/<pid>/stat), its memory its resident memory's growth and peak (/proc/<pid>/status VmRSS, VmHWM) — ours: the benchmark's process (which also creates the VMIs) and the JS heap retained after a full GC. On the emulator, which serves no CRD list or Ingresses, KubeVirt's `apishim` sits in front, and virt-controller talks TLS to a loopback terminator (client-go sends a token only over TLS; the emulator speaks HTTP); on the real control plane it talks to kube-apiserver directly." +
      (typeof apiPath === 'string' ? ` This run on the emulator: ${apiPath}.` : ''),
    '',
  );
  const real = at(e2e, 'real');
  for (const [label, lane] of [['emulator', e2e], ['real control plane', real]] as const) {
    out.push(`### Burst to Running, ${label}${num(lane, 'vmis') ? ` (${num(lane, 'vmis')} VMIs)` : ''}`, '');
    if (whyNot(lane)) out.push(`KubeVirt's column: ${whyNot(lane)}.`, '');
    out.push(...burstTable(lane), ...findings(lane, label));
  }
  out.push('### Ours against KubeVirt\'s, same runs', '');
  out.push(...ratiosTable([['emulator', e2e], ['real', real]]));
  out.push(...profiles(real));
  const lat = (lane: unknown, s: string, k: string) => num(lane, `latency.${s}.${k}`);
  out.push('### Steady rate, create → launcher pod', '');
  const latCols = ([['emulator', e2e], ['real', real]] as const).flatMap(([l, lane]) => SYSTEMS.filter((s) => at(lane, `latency.${s}`) !== undefined).map((s) => [`${s}, ${l}`, lane, s] as const));
  out.push(table(['', ...latCols.map(([l]) => l)], [
    ['p50 / p99 ms', ...latCols.map(([, lane, s]) => `${lat(lane, s, 'eventToPodP50Ms') ?? '–'} / ${lat(lane, s, 'eventToPodP99Ms') ?? '–'}`)],
    ['API requests per VMI / writes', ...latCols.map(([, lane, s]) => `${lat(lane, s, 'controller.requests.requestsPerVmi') ?? '–'} / ${lat(lane, s, 'controller.requests.writesPerVmi') ?? '–'}`)],
    ['controller CPU ms per VMI', ...latCols.map(([, lane, s]) => lat(lane, s, 'controller.cpuMsPerVmi'))],
  ]), '');
  for (const [title, file, path, figures] of [
    ['Replica set scaled 0 → N', rs, 'scale', [['replicas', 'replicas'], ['seconds to all Running', 'secondsToAllRunning'], ['API requests per replica (identity)', 'controller.requests.requestsPerVmi'], ['writes per replica', 'controller.requests.writesPerVmi'], ['controller CPU ms per replica', 'controller.cpuMsPerReplica'], ['controller memory KB per replica (ours: retained JS heap; KubeVirt: RSS growth)', 'controller.memory.kbPerItem'], ['VMIs created', 'vmisCreated']]],
    ['Node drain', drain, 'bySystem', [['VMIs', 'vmis'], ['sandbox s to drained', 'secondsToDrained'], ['share of the ideal', 'shareOfIdeal'], ['peak migrations running at once', 'peakRunning'], ['peak outbound from the node', 'peakOutboundPerNode'], ['target pods created', 'targetPodsCreated'], ['API requests per VMI moved (identity)', 'controller.requests.requestsPerVmi'], ['writes per VMI moved', 'controller.requests.writesPerVmi'], ['controller CPU ms per VMI moved', 'controller.cpuMsPerMovedVmi'], ['controller memory KB per VMI moved (ours: retained JS heap; KubeVirt: RSS growth)', 'controller.memory.kbPerItem']]],
  ] as const) {
    if (!file) continue;
    out.push(`### ${title} (medians of rounds)`, '');
    const cols = ([['emulator', file], ['real', at(file, 'real')]] as const).flatMap(([l, lane]) => SYSTEMS.filter((s) => at(lane, `${path}.${s}`) !== undefined).map((s) => [`${s}, ${l}`, lane, s] as const));
    for (const [l, lane] of [['emulator', file], ['real', at(file, 'real')]] as const) if (whyNot(lane)) out.push(`KubeVirt's column, ${l}: ${whyNot(lane)}.`, '');
    // Figures from before this harness have no per-system medians.
    if (cols.length === 0) {
      out.push('Not run with the side-by-side harness yet.', '');
      continue;
    }
    out.push(table(['', ...cols.map(([l]) => l)], figures.map(([label, k]) => [label, ...cols.map(([, lane, s]) => num(lane, `${path}.${s}.${k}`))])), '');
  }
  return out;
}
