/**
 * The one reconcile contract (docs/architecture.md §6.2), shared by every controller, the Lambda handlers and
 * the local runtime.
 *
 * `reconcile(key, deps)` resolves to an {@link Outcome}; a thrown error means "transient: retry
 * with per-key backoff", except {@link InvalidInputError}s, which are permanent.
 */
export type Outcome =
  | { readonly kind: 'done' }
  | {
      readonly kind: 'requeue';
      readonly afterSeconds: number;
      readonly why: string;
      /** The pass decided nothing: it waits for its expectations to be seen ({@link waitAfter}). */
      readonly waiting?: true;
    }
  | { readonly kind: 'terminal'; readonly reason: string; readonly message: string };

export const done: Outcome = Object.freeze({ kind: 'done' });

export function requeueAfter(afterSeconds: number, why: string): Outcome {
  return { kind: 'requeue', afterSeconds, why };
}

/**
 * A requeue of a pass that stopped before deciding anything, waiting for its expectations (its own
 * or another worker's writes) to be seen. Shadow mode's judge must not take such a pass's silence
 * for content with the objects as they stand (shared/cutover/shadow-recorder.ts `settled`).
 */
export function waitAfter(afterSeconds: number, why: string): Outcome {
  return { kind: 'requeue', afterSeconds, why, waiting: true };
}

export function terminal(reason: string, message: string): Outcome {
  return { kind: 'terminal', reason, message };
}

/** What the delivery knows about why the key is being reconciled. */
export interface ReconcileContext {
  /**
   * The resourceVersion of the event that caused this delivery: reads ask for "not older than"
   * it, so the triggering change is always seen (docs/architecture.md §3). Absent → quorum reads.
   */
  readonly minResourceVersion?: string;
  /** 1 on the first try of this key's current run of failures. */
  readonly attempt?: number;
  /**
   * The object whose event caused this delivery (its kind and UID), when the relay said: a hint a
   * reconcile may use to start a dependent read early, never a fact to act on.
   */
  readonly cause?: { readonly kind: string; readonly uid: string };
}

/** A controller's reconcile function. `D` is the controller's own narrow `deps` object. */
export type Reconcile<D> = (key: string, deps: D, ctx?: ReconcileContext) => Promise<Outcome>;
