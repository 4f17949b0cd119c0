/**
 * Kubernetes resource quantities ("100m", "2Gi", "1k", "1e3") as plain numbers, precise enough
 * for a simulated scheduler's fit check. CPU is compared in milli-units so "100m" stays exact.
 */
import { InvalidInputError } from '../../shared/errors.ts';

const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** Parses a quantity into base units (cores, bytes, counts). Throws on garbage. */
export function parseQuantity(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/.exec(value.trim());
  if (!m) throw new InvalidInputError('quantity', `cannot parse '${value}'`);
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return base * (SUFFIX[m[3] ?? ''] ?? 1);
}

/** Milli-units, rounded up (a request of 0.5m still needs 1m). */
export function milli(value: string | number): number {
  return Math.ceil(parseQuantity(value) * 1000 - 1e-9);
}
