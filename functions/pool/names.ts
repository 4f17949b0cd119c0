/**
 * VM names of a pool: `<pool>-<index>`, new VMs taking the lowest free indices (gaps first), and
 * the index read back from a name (the integer after the last `-`, 0 when not a number), which
 * drives DataVolume / ConfigMap / Secret name indexing and the Ascending/Descending sort.
 */

/** The index of a VM name: the integer after its last `-`; 0 when there is none. */
export function indexOf(name: string): number {
  const tail = name.slice(name.lastIndexOf('-') + 1);
  return /^\d+$/.test(tail) ? Number(tail) : 0;
}

/** One VM to create. */
export interface NewVmName {
  readonly name: string;
  readonly index: number;
}

/**
 * `count` names for new VMs: each the smallest index above the previous pick whose
 * `<pool>-<index>` is not taken in the namespace (by any VM, the pool's or not, deleting or not:
 * an orphan still occupies its name).
 */
export function nextVmNames(pool: string, taken: ReadonlySet<string>, count: number): NewVmName[] {
  const out: NewVmName[] = [];
  let index = 0;
  while (out.length < count) {
    const name = `${pool}-${index}`;
    if (!taken.has(name)) out.push({ name, index });
    index++;
  }
  return out;
}
