/**
 * CPU time and memory of another process from Linux's /proc: how the benchmarks measure a
 * controller that is not a Node process of theirs (KubeVirt's virt-controller). CPU is
 * utime + stime of /proc/<pid>/stat (clock ticks, converted with the kernel's tick rate); memory
 * is /proc/<pid>/status' VmRSS (resident now) and VmHWM (the peak resident size so far).
 */
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`; 100 on every common Linux). */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/** The process's CPU time so far (user + system), µs. */
export function procCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Field 3 (state) is fields[0]: utime is field 14, stime field 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / clockTicks();
}

/** Resident memory now and its peak so far, bytes. */
export function procMemory(pid: number): { rssBytes: number; hwmBytes: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM') };
}
