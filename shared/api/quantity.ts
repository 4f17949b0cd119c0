/**
 * Kubernetes `resource.Quantity` arithmetic, exact.
 *
 * A quantity is held as an integer number of nano-units (`value × 10⁹`) in a bigint plus the
 * format it was written in. Kubernetes itself rounds anything finer than a nano-unit up, so
 * nothing a real apiserver accepts is lost; binary suffixes are exact integers. The string form
 * follows Kubernetes canonicalisation: the format of the (first) operand is kept, the largest
 * suffix that divides the value exactly is chosen, and a binary quantity that is below 1024 or
 * not whole falls back to decimal — so `1G + 303943013` prints `1303943013` and
 * `1Gi + 304087040` prints `1314Mi`, exactly as KubeVirt's pods show them.
 */
import { InvalidInputError } from '../errors.ts';

/** How a quantity is written: `1Gi` (BinarySI), `1G` / `100m` (DecimalSI), `1e9` (DecimalExponent). */
export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** An exact quantity. Immutable; build with {@link parseQuantity} or {@link quantityOf}. */
export interface Quantity {
  /** value × 10⁹, exact. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

const NANO = 1_000_000_000n;
const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const QUANTITY_RE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Division rounding away from zero, as Kubernetes rounds sub-nano precision up. */
function divCeilAbs(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : a < 0n ? q - 1n : q + 1n;
}

/**
 * Parses a quantity string (`"1Gi"`, `"100m"`, `"1.5G"`, `"12e6"`) or number. Throws
 * {@link InvalidInputError} naming `field` when it is not a valid Kubernetes quantity.
 */
export function parseQuantity(input: string | number, field = 'quantity'): Quantity {
  const text = typeof input === 'number' ? String(input) : input.trim();
  const m = QUANTITY_RE.exec(text);
  if (!m || text === '' || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) {
    throw new InvalidInputError(field, `'${String(input)}' is not a valid quantity (e.g. 1Gi, 512M, 100m)`);
  }
  const sign = m[1] === '-' ? -1n : 1n;
  const whole = m[2] ?? '';
  const frac = m[3] ?? '';
  const suffix = m[4] ?? '';
  const digits = BigInt((whole + frac) || '0');
  // value = digits × 10^(-frac.length) × multiplier
  let nanos: bigint;
  let format: QuantityFormat;
  if (suffix in BINARY_SUFFIX) {
    format = 'BinarySI';
    nanos = divCeilAbs(digits * NANO * (1n << BigInt(BINARY_SUFFIX[suffix] ?? 0)), pow10(frac.length));
  } else {
    let exp: number;
    if (suffix.startsWith('e') || suffix.startsWith('E')) {
      format = 'DecimalExponent';
      exp = Number(suffix.slice(1));
      if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) {
        throw new InvalidInputError(field, `'${String(input)}' has an out-of-range exponent`);
      }
    } else {
      format = 'DecimalSI';
      exp = DECIMAL_SUFFIX[suffix] ?? 0;
    }
    const shift = exp + 9 - frac.length;
    nanos = shift >= 0 ? digits * pow10(shift) : divCeilAbs(digits, pow10(-shift));
  }
  // Kubernetes caps quantities well below this; anything this large is certainly a mistake.
  if (nanos > 10n ** 40n) throw new InvalidInputError(field, `'${String(input)}' is too large`);
  return { nanos: sign * nanos, format };
}

/** A whole-number quantity (bytes, cores, device counts) in the given format. */
export function quantityOf(value: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { nanos: BigInt(value) * NANO, format };
}

/** A quantity in milli-units (`300m` CPU). */
export function milliQuantity(milli: bigint | number, format: QuantityFormat = 'DecimalSI'): Quantity {
  return { nanos: BigInt(milli) * 1_000_000n, format };
}

/**
 * Sum; keeps the first operand's format, like `Quantity.Add` — except that a zero first operand
 * takes the second's, as Go's does (`0 + 512Mi` prints as `512Mi`, not `536870912`).
 */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

/** Difference; keeps the first operand's format (a zero one takes the second's, like `Quantity.Sub`). */
export function subQuantity(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos - b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

/** -1, 0 or 1. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

export function isZero(q: Quantity | undefined): boolean {
  return q === undefined || q.nanos === 0n;
}

/** `Quantity.Value()`: the whole-number value, rounded up (away from zero). */
export function quantityValue(q: Quantity): bigint {
  return divCeilAbs(q.nanos, NANO);
}

/** `Quantity.MilliValue()`: rounded up. */
export function quantityMilliValue(q: Quantity): bigint {
  return divCeilAbs(q.nanos, 1_000_000n);
}

/** Largest e in 0..max (step 1) with n divisible by base^e. */
function largestDividingPower(n: bigint, base: bigint, max: number): number {
  let e = 0;
  let v = n;
  while (e < max && v !== 0n && v % base === 0n) {
    v /= base;
    e++;
  }
  return e;
}

function formatDecimal(nanos: bigint, exponentForm: boolean): string {
  if (nanos === 0n) return '0';
  const neg = nanos < 0n;
  const abs = neg ? -nanos : nanos;
  // Find the largest exponent (multiple of 3, from -9 up to 18) that leaves a whole mantissa.
  const tens = largestDividingPower(abs, 10n, 27);
  const exp = Math.min(18, Math.floor(tens / 3) * 3 - 9);
  const mantissa = abs / pow10(exp + 9);
  let suffix: string;
  if (exponentForm) suffix = exp === 0 ? '' : `e${exp}`;
  else suffix = Object.entries(DECIMAL_SUFFIX).find(([, e]) => e === exp)?.[0] ?? '';
  return `${neg ? '-' : ''}${mantissa}${suffix}`;
}

/** The canonical string Kubernetes would serialise this quantity as. */
export function formatQuantity(q: Quantity): string {
  if (q.format === 'BinarySI') {
    const abs = q.nanos < 0n ? -q.nanos : q.nanos;
    // Kubernetes prints small or fractional binary quantities in decimal form.
    if (abs < 1024n * NANO || abs % NANO !== 0n) return formatDecimal(q.nanos, false);
    const whole = abs / NANO;
    const steps = Math.floor(largestDividingPower(whole, 2n, 60) / 10);
    const mantissa = whole >> BigInt(steps * 10);
    const suffix = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][steps] ?? '';
    return `${q.nanos < 0n ? '-' : ''}${mantissa}${suffix}`;
  }
  return formatDecimal(q.nanos, q.format === 'DecimalExponent');
}

/** Parses then re-serialises: `canonicalQuantity("1024Mi") === "1Gi"`. */
export function canonicalQuantity(input: string | number, field?: string): string {
  return formatQuantity(parseQuantity(input, field));
}

/**
 * A byte count written as a decimal integer (the launcher pod's `kubevirt.io/memory-overhead-bytes`
 * annotation) as the BinarySI quantity KubeVirt's controllers put in status
 * (`resource.NewQuantity(n, BinarySI)`): `"302252032"` → `"295168Ki"`. Undefined for anything
 * but a base-10 integer (KubeVirt logs it and leaves the field).
 */
export function bytesAsBinaryQuantity(text: string): string | undefined {
  if (!/^[+-]?\d+$/.test(text.trim())) return undefined;
  return formatQuantity(quantityOf(BigInt(text.trim()), 'BinarySI'));
}
