/**
 * openshift/library-go's `naming.GetName(base, suffix, max)`, which KubeVirt's storage
 * controllers use for every derived name (max 63, DNS-1035): `base-suffix` when it fits; else the
 * base cut short plus the FNV-32a hash of the whole base, then the suffix; with no room for the
 * suffix, the base cut plus the hash of `base-suffix`, cut to max.
 */

/** FNV-1a, 32 bit, as 8 lower-case hex digits (Go's `fmt.Sprintf("%x", fnv32a.Sum32())` zero-padded as library-go does). */
export function fnv32aHex(s: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(s, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

export function getName(base: string, suffix: string, max = 63): string {
  const name = `${base}-${suffix}`;
  if (name.length <= max) return name;
  const baseLength = max - 10 - suffix.length;
  if (baseLength > 0) return `${base.slice(0, baseLength)}-${fnv32aHex(base)}-${suffix}`;
  return `${base.slice(0, Math.max(0, max - 9))}-${fnv32aHex(name)}`.slice(0, max);
}
