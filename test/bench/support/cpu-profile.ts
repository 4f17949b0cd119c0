/**
 * In-process CPU profile (V8 sampling profiler through node:inspector), summarised as self time
 * per component — where a single-process run spends its one busy core.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string; lineNumber?: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

/** Ordered: the first matching pattern names the component. */
const COMPONENTS: [string, RegExp][] = [
  ['sandbox apiserver (emulator)', /infra\/sandbox\/apiserver\//],
  ['sandbox node side (scheduler, kubelet, virt-handler)', /infra\/sandbox\/(nodes|sandbox|clock)/],
  ['relay', /functions\/relay\//],
  ['vmi reconcile + template', /functions\/vmi\/|shared\/template\/|shared\/reconcile\//],
  ['queue + state (SQLite)', /shared\/(queue|state)\/|node:sqlite/],
  ['baseline workqueue', /test\/bench\/baseline\//],
  ['kube client (client-node, undici, HTTP)', /@kubernetes|undici|node-fetch|shared\/kube\/|node:(_http|http|net|stream|internal\/(http|stream|net))/],
];
/**
 * Native frames (no URL: JSON.parse, node:sqlite's exec/all/run, structuredClone…) count for the
 * component of the nearest JavaScript frame that called them; only what no script called (the
 * garbage collector, V8's own work) is charged here.
 */
const RUNTIME = 'GC, runtime (no script caller)';

/** Self-time share (%) per component, with the sampled seconds and the idle share. */
export interface CpuFigures {
  sampledSeconds: number;
  idlePercent: number;
  byComponent: Record<string, number>;
  /** The functions with the most self time: `name (file:line)` → % of busy time (top 15). */
  topFunctions: Record<string, number>;
}

export class CpuProfiler {
  readonly #session = new Session();

  async start(): Promise<void> {
    this.#session.connect();
    await this.#session.post('Profiler.enable');
    await this.#session.post('Profiler.setSamplingInterval', { interval: 1000 });
    await this.#session.post('Profiler.start');
  }

  /** Stops and returns self-time share (%) per component, plus total sampled seconds. */
  async stop(): Promise<CpuFigures> {
    const { profile } = (await this.#session.post('Profiler.stop')) as { profile: Profile };
    this.#session.disconnect();
    // BENCH_CPU_PROFILE_DIR keeps the whole profile (callers and all) for Chrome DevTools or speedscope.
    const dir = process.env.BENCH_CPU_PROFILE_DIR;
    if (dir) writeFileSync(join(dir, `${process.pid}-${Date.now()}.cpuprofile`), JSON.stringify(profile));
    return summariseProfile(profile);
  }
}

/** Self time by component and by function (% of busy time) from a V8 CPU profile. */
export function summariseProfile(profile: Profile): CpuFigures {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const componentOf = (url: string) =>
    COMPONENTS.find(([, re]) => re.test(url))?.[0] ?? (url.includes('node_modules') ? 'other libraries' : url.startsWith('node:') ? 'node built-ins' : 'other');
  /** The URL of the node's own frame, or of its nearest caller that has one ('' if none). */
  const scriptUrl = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)?.callFrame.url;
      if (url) return url;
    }
    return '';
  };
  const byNode = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (deltas[i] ?? 0)));
  const totals = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let all = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const us = byNode.get(node.id) ?? 0;
    if (us === 0) continue;
    all += us;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const url = node.callFrame.url;
    const where = `${node.callFrame.functionName || '(anonymous)'} (${url.replace(/^.*\/(infra|shared|functions|test|node_modules)\//, '$1/') || 'native'}:${(node.callFrame.lineNumber ?? -1) + 1})`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + us);
    const caller = url || scriptUrl(node.id);
    const name = caller ? componentOf(caller) : RUNTIME;
    totals.set(name, (totals.get(name) ?? 0) + us);
  }
  const busy = all - idle;
  const byComponent = Object.fromEntries(
    [...totals].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, Math.round((1000 * us) / Math.max(1, busy)) / 10]),
  );
  const topFunctions = Object.fromEntries(
    [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, us]) => [k, Math.round((1000 * us) / Math.max(1, busy)) / 10]),
  );
  return { sampledSeconds: Math.round(all / 1e4) / 100, idlePercent: Math.round((1000 * idle) / Math.max(1, all)) / 10, byComponent, topFunctions };
}
