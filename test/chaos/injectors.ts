/**
 * Fault injectors for the chaos suite, each a thin wrapper around a real component:
 * a worker that dies at any call of a reconcile (before or after the request is made), a slow
 * queue, a relay whose every message is delivered up to 5 times, and poisoned keys.
 */
import type { ClusterFaults } from '../bench/support/cluster.ts';
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
 * A controller's Kubernetes client under chaos: any call may kill the worker, and a VMI whose
 * name is in `poisoned` fails permanently (a reconcile that can never succeed). With `seen`, the
 * API server's refusals the controller met are counted by status (`seen429`, `seen500`…: on the
 * real lane the only proof that APF or a restart reached the controllers).
 */
export function chaosKube(inner: KubeClient, killer: Killer, poisoned: ReadonlySet<string>, seen?: Record<string, number>): KubeClient {
  return decorateKubeClient(inner, async (method, args, call) => {
    if (method === 'get' && args[0] === VMIS && poisoned.has(args[2] as string)) {
      throw new InvalidInputError('metadata.name', `${String(args[2])} is poisoned by the chaos suite`, 'PoisonKey');
    }
    try {
      return await killer.around(`kube.${method}`, call);
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (seen && status !== undefined && status >= 409) seen[`seen${status}`] = (seen[`seen${status}`] ?? 0) + 1;
      else if (seen && status === undefined && !(err instanceof WorkerCrash) && !(err instanceof InvalidInputError)) seen.seenNetworkErrors = (seen.seenNetworkErrors ?? 0) + 1;
      throw err;
    }
  });
}

/**
 * The poison is injected at the API client (chaosKube), so a poisoned key's messages carry no view
 * (shared/relay/view.ts): its reads go to the API server and meet the poison, as they did before
 * views. Every other key's messages keep theirs.
 */
export function withoutViewsOf(inner: Pick<KeyQueue, 'send'>, poisoned: ReadonlySet<string>): Pick<KeyQueue, 'send'> {
  return {
    send: (messages) => inner.send(messages.map((m) => (m.view && poisoned.has(m.key.slice(m.key.indexOf('/') + 1)) ? (({ view: _v, ...rest }) => rest)(m) : m))),
  };
}

const EXPECTATION_METHODS = ['expectCreations', 'expectDeletions', 'setExpectations', 'creationObserved', 'deletionObserved', 'satisfied', 'get', 'delete', 'pendingCreations', 'tryExpectCreations'] as const;

/** The expectations table under chaos: a worker may die around any table call too. */
export function chaosExpectations(inner: Expectations, killer: Killer): Expectations {
  return killable(inner, EXPECTATION_METHODS, killer, 'table');
}

/** A queue whose every operation takes 0..`maxMs` ms longer. */
export function slowQueue(inner: KeyQueue, random: () => number, maxMs: number): KeyQueue {
  const delay = () => new Promise((r) => setTimeout(r, Math.floor(random() * maxMs)));
  const methods = ['send', 'receive', 'extendLease', 'ack', 'retryLater', 'requeueAfter', 'deadLetter', 'depth', 'listDeadLetters', 'replay', 'close'] as const;
  const out: Record<string, unknown> = { leaseMs: inner.leaseMs };
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

/** The fault loop's counters and its stop (which also clears pending HTTP faults). */
export interface FaultLoop {
  readonly injected: Record<string, number>;
  stop(): Promise<void>;
}

/**
 * Every 0.3–1 s, one fault: the relay's watches dropped (15 %), dropped after compacting the
 * history so the re-watch gets 410 and relists (15 %), the next 3 controller requests answered
 * 429 (20 %) or 500 (20 %), the next 2 controller updates or creates 409 (20 %), the relay's next
 * list 500 (10 %). The emulator's hooks, in this process or in the cluster's own (rig.ts).
 */
export function startFaultLoop(faults: ClusterFaults, random: () => number, identities: { readonly controller: string; readonly relay: string }): FaultLoop {
  const injected: Record<string, number> = { watchDrops: 0, watch410: 0, http429: 0, http500: 0, http409: 0, relayListErrors: 0 };
  let on = true;
  const loop = (async () => {
    while (on) {
      await new Promise((r) => setTimeout(r, 300 + random() * 700));
      if (!on) break;
      const pick = random();
      // Faults are injected against work, not against the clock: while earlier HTTP faults are
      // still waiting for requests to hit, add none. On a slow machine a time-based injector would
      // otherwise pile up faults until every request of a retrying key fails and its retries run out.
      if (pick >= 0.3 && (await faults.remaining()) > 0) continue;
      if (pick < 0.15) {
        await faults.dropWatches();
        injected.watchDrops!++;
      } else if (pick < 0.3) {
        // History gone: the relay's re-watch from its last resourceVersion gets 410 and relists.
        await faults.compactHistory();
        await faults.dropWatches();
        injected.watch410!++;
      } else if (pick < 0.5) {
        await faults.failNext(429, 3, { identity: identities.controller });
        injected.http429! += 3;
      } else if (pick < 0.7) {
        await faults.failNext(500, 3, { identity: identities.controller });
        injected.http500! += 3;
      } else if (pick < 0.9) {
        await faults.failNext(409, 2, { identity: identities.controller, verb: random() < 0.5 ? 'update' : 'create' });
        injected.http409! += 2;
      } else {
        await faults.failNext(500, 1, { identity: identities.relay, verb: 'list' });
        injected.relayListErrors!++;
      }
    }
  })();
  return {
    injected,
    async stop() {
      on = false;
      await loop;
      await faults.clear();
    },
  };
}

/** A failure a person retries: no answer (the connection reset or refused), 429, or a 5xx. */
export function transientAnswer(err: unknown): boolean {
  const status = (err as { status?: number }).status;
  return status === undefined || status === 429 || status >= 500;
}

/**
 * The user's client in a chaos run: it retries, as kubectl and a person do, while the API server
 * restarts or refuses (a network error, 429, 5xx), for up to three minutes (a kube-apiserver
 * restarted on a loaded 2-core machine answered 503 "the request has been made before all known
 * HTTP paths have been installed" for over a minute: real/sqlite, replicaset, seed 2). A create whose answer was
 * lost and that then finds its object (409) counts as done. The faults are the product's to
 * survive, not the harness's.
 */
export function patientUser(inner: KubeClient): KubeClient {
  return decorateKubeClient(inner, async (method, args, call) => {
    const deadline = Date.now() + 180_000;
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (method === 'create' && status === 409 && attempt > 0) {
          const obj = args[1] as { metadata?: { namespace?: string; name?: string } };
          if (obj.metadata?.name) return inner.get(args[0] as never, obj.metadata.namespace, obj.metadata.name);
        }
        // An eviction's 429 is an answer (virt-api refused and marked the VMI; kubectl drain
        // counts it and evicts again), not a refusal to wait out.
        const retriable = transientAnswer(err) && !(status === 429 && method === 'evict');
        if (!retriable || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  });
}
