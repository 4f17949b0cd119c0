/**
 * The dashboard's "recent errors": a small ring buffer of the warn and error lines the local
 * runtime logs. `up` tees every structured log line into it; info lines are dropped on the way.
 */

/** One remembered warn/error line, with the context fields a person looks for first. */
export interface RecentError {
  readonly time: string;
  readonly level: 'warn' | 'error';
  readonly message: string;
  readonly controller?: string;
  readonly key?: string;
  readonly reason?: string;
  readonly error?: string;
}

/** Keeps the last `capacity` warn/error log lines. */
export class RecentErrors {
  readonly #capacity: number;
  readonly #items: RecentError[] = [];
  #seen = 0;

  constructor(capacity = 50) {
    this.#capacity = capacity;
  }

  /** Takes one JSON log line (as jsonLogger writes it); ignores info lines and anything unparsable. */
  record(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      return; // not ours to judge: the log file still has it
    }
    if (typeof raw !== 'object' || raw === null) return;
    const f = raw as Record<string, unknown>;
    if (f.level !== 'warn' && f.level !== 'error') return;
    const str = (k: string): string | undefined => (typeof f[k] === 'string' ? (f[k] as string) : undefined);
    const item: RecentError = {
      time: str('time') ?? new Date().toISOString(),
      level: f.level,
      message: str('message') ?? '',
      ...opt('controller', str('controller')),
      ...opt('key', str('key')),
      ...opt('reason', str('reason')),
      ...opt('error', str('error')),
    };
    this.#items.push(item);
    this.#seen++;
    if (this.#items.length > this.#capacity) this.#items.shift();
  }

  /** Newest first. */
  list(): RecentError[] {
    return [...this.#items].reverse();
  }

  /** How many warn/error lines were recorded since start (the buffer keeps only the last few). */
  get total(): number {
    return this.#seen;
  }
}

function opt<K extends string>(k: K, v: string | undefined): { [P in K]?: string } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: string };
}
