/**
 * `npm run chaos`: the chaos suite (docs/reliability.md) — a 200-VMI run (CHAOS_VMIS, CHAOS_KILL_RATE)
 * under worker kills, duplicate deliveries, the API server's faults, the relay's network and
 * crashes, a slow queue and poison messages (test/chaos/run-chaos.ts); a replica set scaled
 * 20 → 60 → 10 → 40 with VMIs deleted by hand (run-replicaset-chaos.ts; CHAOS_RS_STEPS=a,b,c); a
 * node drain and a launcher upgrade of CHAOS_DRAIN_VMIS (default 8) VMIs (run-drain-chaos.ts);
 * then every controller scenario (pool, run-strategies, snapshot-restore, clone, export, backup,
 * hotplug, live-update: controller-scenarios.ts). Each prints what was injected and checked.
 *
 *   --lane emulator|real     the API server emulator (default) or the real control plane
 *                            (VR_CONTROL_PLANE=real: kube-apiserver restarts, etcd compaction, APF 429)
 *   --backend sqlite|aws     the embedded queue and table (default), or SQS and DynamoDB (fauxqs,
 *                            DynamoDB Local, the real AWS SDK, faults injected as SDK middleware)
 *   --seeds 1,2,3            run every part once per seed (default one random seed; CHAOS_SEED)
 *   --only vmi,drain,pool    just these parts (vmi, replicaset, drain, or a scenario's name)
 *   --soak 60m               the soak instead (test/chaos/soak.ts): mixed churn with faults for
 *                            the duration, memory and queue depth sampled each minute, slopes
 *   --actions a,b            with --soak: only these of its actions (scaleRs,drain,…), to replay a
 *                            seed with a narrower mix
 *   --heap-snapshots DIR     with --soak: V8 heap snapshots after the warm-up and at the end, in DIR
 *   --cluster apart|in-process  with --soak: the emulator and simulated nodes in a process of their
 *                            own (default on the emulator lane: this process's memory is then the
 *                            product's and the harness's alone) or in this one (the real lane's way)
 *   --lambda                 with --backend aws: the VMI run's keys consumed by Lambda-shaped
 *                            invocations (batches, killed at their deadline or by a crash)
 *   --json FILE              also append each part's report to FILE (JSON lines)
 *
 * Needs nothing beyond `npm ci` on the emulator lane; the real lane builds the control plane on
 * first use, the AWS backend starts DynamoDB Local (Java; `npm test` installs it). A part that
 * cannot run says why in one line and the others go on. Exits 1 when anything failed.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    lane: { type: 'string', default: process.env.VR_CONTROL_PLANE === 'real' ? 'real' : 'emulator' },
    backend: { type: 'string', default: process.env.CHAOS_BACKEND ?? 'sqlite' },
    seeds: { type: 'string' },
    only: { type: 'string' },
    soak: { type: 'string' },
    json: { type: 'string' },
    lambda: { type: 'boolean', default: false },
    actions: { type: 'string' },
    'heap-snapshots': { type: 'string' },
    cluster: { type: 'string' },
  },
});
const fail = (why: string): never => {
  process.stderr.write(`chaos: ${why}\n`);
  process.exit(2);
};
if (values.lane !== 'emulator' && values.lane !== 'real') fail(`--lane must be emulator or real, not ${JSON.stringify(values.lane)}`);
if (values.backend !== 'sqlite' && values.backend !== 'aws') fail(`--backend must be sqlite or aws, not ${JSON.stringify(values.backend)}`);
if (values.actions !== undefined && values.soak === undefined) fail('--actions goes with --soak (it narrows the soak\'s mix)');
if (values['heap-snapshots'] !== undefined && values.soak === undefined) fail('--heap-snapshots goes with --soak');
if (values['heap-snapshots'] !== undefined && !existsSync(values['heap-snapshots'])) fail(`--heap-snapshots: no directory ${values['heap-snapshots']}`);
if (values.cluster !== undefined && values.soak === undefined) fail('--cluster goes with --soak');
if (values.cluster !== undefined && values.cluster !== 'apart' && values.cluster !== 'in-process') fail(`--cluster must be apart or in-process, not ${JSON.stringify(values.cluster)}`);
if (values.cluster === 'apart' && values.lane === 'real') fail('--cluster apart runs the emulator lane only: the real lane\'s faults restart the control plane from this process');
if (values.lambda && values.backend !== 'aws') fail('--lambda needs --backend aws (Lambda-shaped invocations consume SQS)');
const backend = values.backend as 'sqlite' | 'aws';
// The lane is read when the suites' modules load: set it before importing them.
process.env.VR_CONTROL_PLANE = values.lane;
const seedList = (values.seeds ?? process.env.CHAOS_SEED ?? '').split(',').filter(Boolean).map(Number);
if (seedList.some((s) => !Number.isInteger(s))) fail(`--seeds takes integers separated by commas, not ${JSON.stringify(values.seeds)}`);
const seeds: (number | undefined)[] = seedList.length ? seedList : [undefined];
const killRate = process.env.CHAOS_KILL_RATE ? Number(process.env.CHAOS_KILL_RATE) : undefined;
const out = (line: string) => process.stdout.write(`${line}\n`);
const record = (report: object) => {
  if (values.json) appendFileSync(values.json, `${JSON.stringify({ lane: values.lane, backend, at: new Date().toISOString(), ...report })}\n`);
};
const listed = (injected: Record<string, number>) => Object.entries(injected).map(([k, v]) => `${k} ${v}`).join(', ');

if (values.soak !== undefined) {
  const m = /^(\d+)(m|min)?$/.exec(values.soak);
  if (!m) fail(`--soak takes minutes, e.g. 60m, not ${JSON.stringify(values.soak)}`);
  const { runSoak, SOAK_ACTIONS } = await import('../test/chaos/soak.ts');
  const minutes = Number(m![1]);
  const actions = values.actions?.split(',').filter(Boolean);
  const unknown = actions?.filter((a) => !(SOAK_ACTIONS as readonly string[]).includes(a)) ?? [];
  if (unknown.length) fail(`--actions: unknown ${unknown.join(', ')}; the soak's actions are ${SOAK_ACTIONS.join(', ')}`);
  const cluster = values.cluster as 'apart' | 'in-process' | undefined;
  out(`chaos: soak of ${minutes} min on the ${values.lane} lane over ${backend}`);
  const r = await runSoak({ minutes, backend, ...(cluster ? { cluster } : {}), ...(seeds[0] !== undefined ? { seed: seeds[0] } : {}), ...(actions ? { actions } : {}), ...(values['heap-snapshots'] ? { heapSnapshotDir: values['heap-snapshots'] } : {}), progress: (l) => out(`  ${l}`) });
  record({ part: 'soak', ...r });
  out(
    [
      `seed ${r.seed}, ${r.minutes} min, the cluster ${r.cluster === 'apart' ? 'in its own process' : 'in this process'}; actions: ${listed(r.actions)}`,
      `injected: ${listed(r.injected)}`,
      `slopes per hour: retained heap ${r.slopes.heapMbPerHour} MB, rss ${r.slopes.rssMbPerHour} MB${r.cluster === 'apart' ? ` (the product and the harness; the cluster's process: heap ${r.slopes.clusterHeapMbPerHour} MB, rss ${r.slopes.clusterRssMbPerHour} MB)` : ''}, queued keys ${r.slopes.queuedPerHour}, the cluster's Events ${r.slopes.eventsPerHour}; ${r.auditEntriesChecked} audit entries replayed by the invariants`,
      `DLQ: ${r.deadLetters.map((d) => `${d.key} [${d.reason}]`).join(', ') || 'empty'}`,
      r.violations.length ? `FAILED:\n  - ${r.violations.join('\n  - ')}${r.trails.map((t, i) => `\n  overshoot ${i + 1}, the writes before it:\n    ${t.join('\n    ')}`).join('')}` : 'PASSED: converged after calm, only the poison dead-lettered, one launcher pod per VMI and the replica set within spec.replicas at every audit instant',
    ].join('\n'),
  );
  process.exit(r.violations.length ? 1 : 0);
}

const { chaosViolations, runChaos } = await import('../test/chaos/run-chaos.ts');
const { replicaSetChaosViolations, runReplicaSetChaos } = await import('../test/chaos/run-replicaset-chaos.ts');
const { drainChaosViolations, runDrainChaos } = await import('../test/chaos/run-drain-chaos.ts');
const { runControllerChaos } = await import('../test/chaos/run-controller-chaos.ts');
const { SCENARIOS } = await import('../test/chaos/controller-scenarios.ts');

type Part = { name: string; run: (seed: number | undefined) => Promise<number> };
const common = (seed: number | undefined) => ({ backend, ...(seed !== undefined ? { seed } : {}), ...(killRate !== undefined ? { killRate } : {}), progress: (l: string) => out(`  ${l}`) });
const verdict = (violations: string[], passed: string) => (violations.length ? `FAILED:\n  - ${violations.join('\n  - ')}` : `PASSED: ${passed}`);
const PARTS: Part[] = [
  {
    name: 'vmi',
    async run(seed) {
      const vmis = Number(process.env.CHAOS_VMIS ?? 200);
      out(`chaos: ${vmis} VMIs`);
      const r = await runChaos({ vmis, ...common(seed), ...(values.lambda ? { consumer: 'lambda' as const } : {}) });
      const v = chaosViolations(r);
      record({ part: 'vmi', seed: r.seed, seconds: r.seconds, keys: r.vmis, injected: r.injected, violations: v });
      out(`seed ${r.seed}, ${r.seconds} s; injected: ${listed(r.injected)}\nScheduled: ${r.vmis - r.lost.length}/${r.vmis}; duplicate launcher pods: ${r.duplicatePods.length}; DLQ: ${r.deadLetters.map((d) => `${d.key || '(malformed)'} [${d.reason}]`).join(', ')}`);
      out(verdict(v, '0 lost keys, 0 duplicate pods, poison dead-lettered with reasons and replayed'));
      return v.length;
    },
  },
  {
    name: 'replicaset',
    async run(seed) {
      const steps = (process.env.CHAOS_RS_STEPS ?? '20,60,10,40').split(',').map(Number);
      out(`chaos: replica set scaled ${steps.join(' → ')}`);
      const r = await runReplicaSetChaos({ steps, handDeletes: 3, ...common(seed) });
      const v = replicaSetChaosViolations(r);
      record({ part: 'replicaset', seed: r.seed, seconds: r.seconds, keys: Math.max(...steps), injected: r.injected, violations: v });
      out(`seed ${r.seed}, ${r.seconds} s, ${r.auditEntries} audit entries replayed; injected: ${listed(r.injected)}`);
      out(verdict(v, 'never more live VMIs than spec.replicas at any audit-log instant; every step reached exactly'));
      return v.length;
    },
  },
  {
    name: 'drain',
    async run(seed) {
      const vmis = Number(process.env.CHAOS_DRAIN_VMIS ?? 8);
      out(`chaos: drain and upgrade of ${vmis} VMIs`);
      const r = await runDrainChaos({ vmis, phaseTimeoutMs: 300_000, ...common(seed) });
      const v = drainChaosViolations(r);
      record({ part: 'drain', seed: r.seed, seconds: r.seconds, keys: vmis, injected: r.injected, violations: v });
      out(`seed ${r.seed}, ${r.seconds} s (drain ${r.drainSeconds} s, update ${r.updateSeconds} s), ${r.migrationsCreated} migrations, peaks ${r.peaks.cluster} running / ${r.peaks.perNode} outbound; injected: ${listed(r.injected)}`);
      out(verdict(v, 'no VMI with two unfinished migrations, the limits held, every VMI Running on the new launcher, only the poison dead-lettered and replayed'));
      return v.length;
    },
  },
  ...SCENARIOS.map(
    (s): Part => ({
      name: s.name,
      async run(seed) {
        out(`chaos: ${s.name} (${s.controllers.join(', ')})`);
        const r = await runControllerChaos(s, common(seed));
        record({ part: s.name, seed: r.seed, seconds: r.seconds, checked: r.checked, injected: r.injected, violations: r.violations });
        out(`seed ${r.seed}, ${r.seconds} s; injected: ${listed(r.injected)}`);
        out(verdict(r.violations, `${r.checked}; nothing dead-lettered`));
        return r.violations.length;
      },
    }),
  ),
];
const only = values.only?.split(',').filter(Boolean);
const unknown = (only ?? []).filter((n) => !PARTS.some((p) => p.name === n));
if (unknown.length) fail(`--only: no part ${unknown.join(', ')}; known: ${PARTS.map((p) => p.name).join(', ')}`);

let failed = 0;
let couldNotRun = 0;
out(`chaos: ${values.lane} lane, ${backend} backend, seeds ${seeds.map((s) => s ?? 'random').join(', ')}`);
for (const seed of seeds) {
  for (const p of PARTS.filter((x) => !only || only.includes(x.name))) {
    try {
      failed += (await p.run(seed)) > 0 ? 1 : 0;
    } catch (err) {
      // A part that cannot run is one line, and the next part runs.
      couldNotRun++;
      process.stderr.write(`chaos: ${p.name} could not run: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    }
  }
}
out(`chaos: ${failed} part run(s) failed, ${couldNotRun} could not run`);
// A part that failed half-way may have left a server holding the event loop open.
process.exit(failed || couldNotRun ? 1 : 0);
