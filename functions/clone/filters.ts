/**
 * The clone's label and annotation filters (reference §3.3 "Filters"): which keys of a map a
 * filter list removes. A nil list keeps everything. Otherwise each entry is an **unanchored**
 * regular expression (Go's `regexp.MatchString`): `!x` is a negation, a lone `*` means `.*`; a
 * key is kept when some regular filter matches it and no negation does. So `prefix*` keeps any
 * key containing `prefi`, as KubeVirt's does (quirk Q-C5); an empty list removes every key.
 */

interface CompiledFilters {
  readonly keep: readonly RegExp[];
  readonly drop: readonly RegExp[];
}

/** An entry Go's regexp would refuse matches nothing here (JS's syntax is close enough for these patterns). */
function compile(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

function compileFilters(filters: readonly string[]): CompiledFilters {
  const keep: RegExp[] = [];
  const drop: RegExp[] = [];
  for (const f of filters) {
    if (f === '*') keep.push(/.*/);
    else if (f.startsWith('!')) drop.push(...[compile(f.slice(1))].filter((r): r is RegExp => r !== undefined));
    else keep.push(...[compile(f)].filter((r): r is RegExp => r !== undefined));
  }
  return { keep, drop };
}

const keeps = (f: CompiledFilters, key: string) => f.keep.some((r) => r.test(key)) && !f.drop.some((r) => r.test(key));

/**
 * The keys of `map` the filters remove, sorted (KubeVirt walks a Go map: its order is
 * unspecified, so sorting is as faithful as any order and makes the patches stable).
 * `exempt` keys are never removed.
 */
export function keysToRemove(map: Readonly<Record<string, string>> | undefined, filters: readonly string[] | undefined, exempt: readonly string[] = []): string[] {
  if (filters === undefined || filters === null) return [];
  const compiled = compileFilters(filters);
  return Object.keys(map ?? {})
    .filter((k) => !exempt.includes(k))
    .filter((k) => !keeps(compiled, k))
    .sort();
}
