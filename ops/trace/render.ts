/**
 * `virt-reconciler trace` as text: a heading naming the keys followed, then one row per step of
 * the timeline (time UTC with milliseconds, controller, key, step, what happened).
 */
import type { ObjectTrace } from './collect.ts';

/** Epoch ms → `10:51:35.931` (UTC); the date is in the heading. */
function clock(epochMs: number): string {
  return Number.isFinite(epochMs) && epochMs > 0 ? new Date(epochMs).toISOString().slice(11, 23) : '-';
}

/** The whole text, ending in a newline. `source` names the queue and table read. */
export function renderTrace(t: ObjectTrace, source: string): string {
  const writes = t.entries.reduce((n, e) => n + e.writes.length, 0);
  const lines = [`trace ${t.target}: ${t.entries.length} reconcile${t.entries.length === 1 ? '' : 's'}, ${writes} write${writes === 1 ? '' : 's'} (${source})`];
  for (const l of t.links) lines.push(`  ${l.controller} ${l.key}: ${l.reconciles} reconcile${l.reconciles === 1 ? '' : 's'} (${l.why})`);
  if (t.pods.length > 0) lines.push(`  pods written: ${t.pods.join(', ')}`);
  if (t.entries.length === 0) {
    lines.push('no reconcile recorded for these keys in the last 6 h (traces keep the last 50 per key)');
    return `${lines.join('\n')}\n`;
  }
  const first = t.entries[0]!.receivedAt;
  const cw = Math.max(10, ...t.timeline.map((s) => s.controller.length));
  const kw = Math.max(3, ...t.timeline.map((s) => s.key.length));
  lines.push('', `times UTC, ${new Date(first).toISOString().slice(0, 10)}`, `${'TIME'.padEnd(12)}  ${'CONTROLLER'.padEnd(cw)}  ${'KEY'.padEnd(kw)}  STEP`);
  for (const s of t.timeline) {
    const time = s.step === 'write' ? ''.padEnd(12) : clock(s.at);
    lines.push(`${time}  ${s.controller.padEnd(cw)}  ${s.key.padEnd(kw)}  ${(s.step === 'write' ? '  write' : s.step).padEnd(9)}  ${s.text}`);
  }
  return `${lines.join('\n')}\n`;
}
