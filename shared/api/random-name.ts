/**
 * Random name suffixes as apimachinery's `utilrand.String` makes them (KubeVirt names clone
 * targets, snapshots and exporter secrets with it): no vowels, no confusable digits.
 */

/** apimachinery's `utilrand` alphabet. */
export const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `rand.String(n)`: `n` characters of {@link NAME_ALPHABET}; `random` is `Math.random`'s contract. */
export function randomSuffix(n: number, random: () => number = Math.random): string {
  let out = '';
  for (let i = 0; i < n; i++) out += NAME_ALPHABET[Math.floor(random() * NAME_ALPHABET.length) % NAME_ALPHABET.length];
  return out;
}
