/**
 * Plain-text output shared by the operations commands (`queues`, `dlq`, `replay`): aligned
 * columns, durations and timestamps a person reads at a terminal.
 */

/** Aligns rows under a header; numbers (and `-`) right-aligned, text left-aligned. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^(-|\d[\d.]*[a-z\d.]*)$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** 0 → `0s`, 4.2 → `4.2s`, 125 → `2m05s`, 7300 → `2h01m`. */
export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds < 10 && seconds % 1 !== 0 ? seconds.toFixed(1) : Math.floor(seconds)}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Epoch ms → `2026-05-01 12:03:04Z` (UTC, second precision); `-` for 0. */
export function formatTime(epochMs: number): string {
  if (!Number.isFinite(epochMs) || epochMs <= 0) return '-';
  return new Date(epochMs).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/** The key as shown: a malformed dead letter has none. */
export function showKey(key: string): string {
  return key === '' ? '(malformed)' : key;
}
