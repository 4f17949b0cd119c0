/** Go's `time.ParseDuration` as Kubernetes' `metav1.Duration` fields carry it (`5m`, `1h30m`, `1.5s`, `0`). */

const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`5m`, `1h30m`, `1.5s`, `0`) in ms; undefined when it does not parse. */
export function parseDurationMs(d: string): number | undefined {
  if (d === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let consumed = 0;
  const body = d.startsWith('-') || d.startsWith('+') ? d.slice(1) : d;
  while ((m = re.exec(body)) !== null) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed !== body.length || body.length === 0) return undefined;
  return d.startsWith('-') ? -total : total;
}
