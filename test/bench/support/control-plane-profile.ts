/**
 * Go CPU profiles of the real control plane during a burst (BENCH_CPU_PROFILE_DIR on the real
 * lane): kube-apiserver, etcd (the `serve` process), kube-controller-manager and kube-scheduler,
 * each through its /debug/pprof (sandbox/real/pprof.ts). A profile covers a number of seconds
 * fixed when it is asked for, and a burst's length is not known in advance, so each component is
 * profiled in consecutive chunks of a few seconds until the burst ends; `go tool pprof` merges
 * the chunks when it reads them together. The files stay in the directory (open them with
 * `go tool pprof -http=: <files>`); {@link summariseGoProfiles} is the top of each, as
 * `go tool pprof -top` prints it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fetchCpuProfile, type PprofEndpoint } from '../../../sandbox/real/pprof.ts';

const run = promisify(execFile);

/** Seconds per chunk: how far a profile may run past the burst's end. */
const CHUNK_SECONDS = 3;

/** The top of one component's profile. */
export interface GoProfileSummary {
  /** The chunks' files, merged. */
  readonly files: string[];
  /** Wall seconds profiled and CPU seconds sampled (1.0 CPU-second per second = one core busy). */
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Functions by flat (self) CPU share, as `go tool pprof -top` lists them: `function` → % of samples. */
  readonly topFlat: Record<string, number>;
  /** The same by cumulative share (the function and what it calls), from `-top -cum`. */
  readonly topCum: Record<string, number>;
  /** Why there is no summary (no `go`, a failed fetch), when there is none. */
  readonly error?: string;
}

/** Profiles every endpoint in chunks from start() until stop(); see the module comment. */
export class ControlPlaneProfiler {
  readonly #endpoints: Readonly<Record<string, PprofEndpoint>>;
  readonly #dir: string;
  readonly #files = new Map<string, string[]>();
  readonly #errors = new Map<string, string>();
  #stopping = false;
  #loops: Promise<void>[] = [];
  #startedAt = 0;

  constructor(endpoints: Readonly<Record<string, PprofEndpoint>>, dir: string) {
    this.#endpoints = endpoints;
    this.#dir = dir;
  }

  start(): void {
    mkdirSync(this.#dir, { recursive: true });
    this.#startedAt = Date.now();
    const stamp = new Date(this.#startedAt).toISOString().replace(/[:.]/g, '-');
    this.#loops = Object.entries(this.#endpoints).map(async ([component, endpoint]) => {
      const files: string[] = [];
      this.#files.set(component, files);
      for (let i = 0; !this.#stopping; i++) {
        try {
          const file = join(this.#dir, `control-plane-${stamp}-${component}-${String(i).padStart(3, '0')}.pb.gz`);
          writeFileSync(file, await fetchCpuProfile(endpoint, CHUNK_SECONDS));
          files.push(file);
        } catch (err) {
          // One failed chunk ends this component's profile; the others go on.
          this.#errors.set(component, err instanceof Error ? err.message : String(err));
          return;
        }
      }
    });
  }

  /** Ends the chunks (the running one completes) and summarises each component's profile. */
  async stop(): Promise<Record<string, GoProfileSummary>> {
    this.#stopping = true;
    await Promise.all(this.#loops);
    const seconds = Math.round((Date.now() - this.#startedAt) / 100) / 10;
    const out: Record<string, GoProfileSummary> = {};
    for (const component of Object.keys(this.#endpoints)) {
      const files = this.#files.get(component) ?? [];
      const error = this.#errors.get(component);
      out[component] = files.length === 0 ? { files, seconds, cpuSeconds: 0, topFlat: {}, topCum: {}, error: error ?? 'no profile taken' } : { ...(await summariseGoProfiles(files)), ...(error ? { error } : {}) };
    }
    return out;
  }
}

/** `go tool pprof -top` (flat, then `-cum`) of the files merged; the error in the summary when `go` fails. */
export async function summariseGoProfiles(files: readonly string[], nodes = 15): Promise<GoProfileSummary> {
  try {
    const flat = await run('go', ['tool', 'pprof', '-top', `-nodecount=${nodes}`, ...files], { maxBuffer: 8 << 20 });
    const cum = await run('go', ['tool', 'pprof', '-top', '-cum', `-nodecount=${nodes}`, ...files], { maxBuffer: 8 << 20 });
    const head = parsePprofTop(flat.stdout);
    return { files: [...files], seconds: head.seconds, cpuSeconds: head.cpuSeconds, topFlat: head.flat, topCum: parsePprofTop(cum.stdout).cum };
  } catch (err) {
    return { files: [...files], seconds: 0, cpuSeconds: 0, topFlat: {}, topCum: {}, error: `go tool pprof: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
}

/**
 * Reads `go tool pprof -top` text: the header's `Duration: 15.01s, Total samples = 4.52s`, then
 * rows `flat flat% sum% cum cum% function`. Pure.
 */
export function parsePprofTop(text: string): { seconds: number; cpuSeconds: number; flat: Record<string, number>; cum: Record<string, number> } {
  const duration = /Duration: ([\d.]+)(ms|s|mins?|hrs?)/.exec(text);
  const samples = /Total samples = ([\d.]+)(ms|s|mins?|hrs?)/.exec(text);
  const secondsOf = (m: RegExpExecArray | null) => (m ? Number(m[1]) * ({ ms: 0.001, s: 1, min: 60, mins: 60, hr: 3600, hrs: 3600 } as Record<string, number>)[m[2]!]! : 0);
  const flat: Record<string, number> = {};
  const cum: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*[\d.]+\w*\s+([\d.]+)%\s+[\d.]+%\s+[\d.]+\w*\s+([\d.]+)%\s+(.+)$/.exec(line);
    if (!m) continue;
    flat[m[3]!] = Number(m[1]);
    cum[m[3]!] = Number(m[2]);
  }
  return { seconds: Math.round(secondsOf(duration) * 10) / 10, cpuSeconds: Math.round(secondsOf(samples) * 100) / 100, flat, cum };
}
