/**
 * Fault injectors for the chaos suite, each a thin wrapper around a real component:
 * a worker that dies at any call of a reconcile (before or after the request is made), a slow
 * queue, a relay whose every message is delivered up to 5 times, and poisoned keys.
 */
import { InvalidInputError } from '../../shared/errors.ts';
import { VMIS } from '../../shared/api/resources.ts';
import { decorateKubeClient } from '../../shared/kube/call-counter.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { KeyQueue } from '../../shared/queue/port.ts';
import { WorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import type { Expectations } from '../../shared/state/port.ts';

/** A small seeded PRNG (mulberry32): a chaos run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Decides, call by call, whether the worker "dies" before or after the call. */
export class Killer {
  armed = true;
  crashes = 0;
  readonly #random: () => number;
  readonly #rate: number;

  /** `rate`: probability per call of a crash (half before the request, half after). */
  constructor(random: () => number, rate: number) {
    this.#random = random;
    this.#rate = rate;
  }

  /** Runs `call`, maybe dying before or after it. */
  async around<T>(what: string, call: () => Promise<T>): Promise<T> {
    if (this.#roll()) throw new WorkerCrash(`worker killed before ${what}`);
    const result = await call();
    if (this.#roll()) throw new WorkerCrash(`worker killed after ${what}`);
    return result;
  }

  #roll(): boolean {
    if (!this.armed || this.#random() >= this.#rate / 2) return false;
    this.crashes++;
    return true;
  }
}

/** Wraps every method of `target` (an object of async methods) with `killer.around`. */
function killable<T extends object>(target: T, methods: readonly string[], killer: Killer, label: string): T {
  const out: Record<string, unknown> = {};
  for (const m of methods) {
    const fn = (target as Record<string, unknown>)[m] as (...a: unknown[]) => Promise<unknown>;
    out[m] = (...args: unknown[]) => killer.around(`${label}.${m}`, () => fn.apply(target, args));
  }
  return out as T;
}

/**
 * The VMI controller's Kubernetes client under chaos: any call may kill the worker, and a VMI
 * whose name is in `poisoned` fails permanently (a reconcile that can never succeed).
 */
export function chaosKube(inner: KubeClient, killer: Killer, poisoned: ReadonlySet<string>): KubeClient {
  return decorateKubeClient(inner, (method, args, call) => {
    if (method === 'get' && args[0] === VMIS && poisoned.has(args[2] as string)) {
      throw new InvalidInputError('metadata.name', `${String(args[2])} is poisoned by the chaos suite`, 'PoisonKey');
    }
    return killer.around(`kube.${method}`, call);
  });
}

const EXPECTATION_METHODS = ['expectCreations', 'expectDeletions', 'setExpectations', 'creationObserved', 'deletionObserved', 'satisfied', 'get', 'delete', 'pendingCreations', 'tryExpectCreations'] as const;

/** The expectations table under chaos: a worker may die around any table call too. */
export function chaosExpectations(inner: Expectations, killer: Killer): Expectations {
  return killable(inner, EXPECTATION_METHODS, killer, 'table');
}

/** A queue whose every operation takes 0..`maxMs` ms longer. */
export function slowQueue(inner: KeyQueue, random: () => number, maxMs: number): KeyQueue {
  const delay = () => new Promise((r) => setTimeout(r, Math.floor(random() * maxMs)));
  const methods = ['send', 'receive', 'ack', 'retryLater', 'requeueAfter', 'deadLetter', 'depth', 'listDeadLetters', 'replay', 'close'] as const;
  const out: Record<string, unknown> = {};
  for (const m of methods) {
    const fn = inner[m] as (...a: unknown[]) => Promise<unknown>;
    out[m] = async (...args: unknown[]) => {
      await delay();
      return fn.apply(inner, args);
    };
  }
  return out as unknown as KeyQueue;
}

const EVENT_VARIANTS = ['ADDED', 'MODIFIED', 'RELIST', 'REPLAY', 'REQUEUE'];

/**
 * A relay-side sender that delivers every message 1–`maxCopies` times: the copies differ in
 * cause.event, so the queue's exact-duplicate filter lets them through (as two relay replicas or
 * a relist would), and arrive spread over `spreadMs` so some land while the key is in flight.
 */
export class DuplicatingSender {
  duplicates = 0;
  readonly #inner: Pick<KeyQueue, 'send'>;
  readonly #random: () => number;
  readonly #maxCopies: number;
  readonly #spreadMs: number;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(inner: Pick<KeyQueue, 'send'>, random: () => number, maxCopies = 5, spreadMs = 500) {
    this.#inner = inner;
    this.#random = random;
    this.#maxCopies = maxCopies;
    this.#spreadMs = spreadMs;
  }

  async send(messages: readonly KeyMessage[]): Promise<void> {
    await this.#inner.send(messages);
    for (const m of messages) {
      const copies = Math.floor(this.#random() * this.#maxCopies);
      for (let i = 0; i < copies; i++) {
        const event = EVENT_VARIANTS[(EVENT_VARIANTS.indexOf(m.cause.event) + 1 + i) % EVENT_VARIANTS.length]!;
        const copy: KeyMessage = { ...m, cause: { ...m.cause, event } };
        const t = setTimeout(() => {
          this.#timers.delete(t);
          this.duplicates++;
          // A copy that fails to send is just a duplicate fewer.
          this.#inner.send([copy]).catch(() => {});
        }, Math.floor(this.#random() * this.#spreadMs));
        this.#timers.add(t);
      }
    }
  }

  stop(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
