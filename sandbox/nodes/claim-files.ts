/**
 * What the sandbox keeps in place of a volume's contents: the files programs on the simulated
 * nodes have written into a claim, by path inside the claim. Nothing runs in containers here, so
 * this is the whole of it — today one marker: `meta/migrated`, which a source virt-launcher writes
 * into its backend-storage claim when its domain has migrated away (KubeVirt's libvirt hook), and
 * which the migration controller's `recover-<migration>` Job looks for (pod-script.ts). Kept by the
 * sandbox process, so the same on both lanes: the real control plane stores no file contents either.
 */

/** Files per claim (`namespace/claim` → paths inside the claim). */
export class ClaimFiles {
  readonly #files = new Map<string, Set<string>>();

  /** Writes (creates, empty) `path` in the claim. */
  write(namespace: string, claim: string, path: string): void {
    const key = `${namespace}/${claim}`;
    const set = this.#files.get(key) ?? new Set<string>();
    set.add(normalize(path));
    this.#files.set(key, set);
  }

  /** True when `path` exists in the claim. */
  exists(namespace: string, claim: string, path: string): boolean {
    return this.#files.get(`${namespace}/${claim}`)?.has(normalize(path)) ?? false;
  }

  /** Removes `path` from the claim (a test making a marker disappear). */
  remove(namespace: string, claim: string, path: string): void {
    this.#files.get(`${namespace}/${claim}`)?.delete(normalize(path));
  }
}

function normalize(path: string): string {
  return path.split('/').filter((p) => p !== '' && p !== '.').join('/');
}
