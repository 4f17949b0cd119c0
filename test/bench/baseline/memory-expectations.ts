/**
 * In-memory ControllerExpectations (KubeVirt keeps them in a process-local cache): the baseline
 * controller's counterpart of the table-backed store. Same port, same semantics, no I/O.
 */
import { isExpectationExpired, type ExpectationRecord, type Expectations, type ExpectationSeen } from '../../../shared/state/port.ts';

export class MemoryExpectations implements Expectations {
  readonly #records = new Map<string, ExpectationRecord>();

  #id(scope: string, key: string): string {
    return `${scope}\n${key}`;
  }

  async expectCreations(scope: string, key: string, n: number, now: number): Promise<void> {
    const old = this.#records.get(this.#id(scope, key));
    this.#records.set(this.#id(scope, key), { add: n, del: 0, deleteKeys: old?.deleteKeys ?? [], setAt: now });
  }

  async expectDeletions(scope: string, key: string, deleteKeys: readonly string[], now: number): Promise<void> {
    const keys = [...new Set(deleteKeys)];
    this.#records.set(this.#id(scope, key), { add: 0, del: keys.length, deleteKeys: keys, setAt: now });
  }

  async setExpectations(scope: string, key: string, add: number, del: number, now: number): Promise<void> {
    const old = this.#records.get(this.#id(scope, key));
    this.#records.set(this.#id(scope, key), { add, del, deleteKeys: old?.deleteKeys ?? [], setAt: now });
  }

  async creationObserved(scope: string, key: string): Promise<void> {
    const r = this.#records.get(this.#id(scope, key));
    if (r) this.#records.set(this.#id(scope, key), { ...r, add: r.add - 1 });
  }

  async deletionObserved(scope: string, key: string, deleteKey: string): Promise<void> {
    const r = this.#records.get(this.#id(scope, key));
    if (!r || !r.deleteKeys.includes(deleteKey)) return;
    this.#records.set(this.#id(scope, key), { ...r, del: r.del - 1, deleteKeys: r.deleteKeys.filter((k) => k !== deleteKey) });
  }

  async satisfied(scope: string, key: string, now: number): Promise<boolean> {
    const r = this.#records.get(this.#id(scope, key));
    return !r || (r.add <= 0 && r.del <= 0) || isExpectationExpired(r, now);
  }

  async get(scope: string, key: string): Promise<ExpectationRecord | undefined> {
    return this.#records.get(this.#id(scope, key));
  }

  async delete(scope: string, key: string): Promise<void> {
    this.#records.delete(this.#id(scope, key));
  }

  async pendingCreations(scope: string, now: number): Promise<number> {
    let n = 0;
    for (const [id, r] of this.#records) if (id.startsWith(`${scope}\n`) && !isExpectationExpired(r, now)) n += r.add;
    return n;
  }

  async tryExpectCreations(scope: string, key: string, n: number, now: number, seen?: ExpectationSeen): Promise<boolean> {
    const current = await this.get(scope, key);
    if (seen === null && current && !isExpectationExpired(current, now)) return false;
    if (seen && current && current.setAt !== seen.setAt) return false;
    if (!(await this.satisfied(scope, key, now))) return false;
    await this.expectCreations(scope, key, n, now);
    return true;
  }
}
