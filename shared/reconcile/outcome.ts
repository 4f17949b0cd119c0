/**
 * The one reconcile contract (STYLE.md §2), shared by every controller, the Lambda handlers and
 * the local runtime.
 *
 * `reconcile(key, deps)` resolves to an {@link Outcome}; a thrown error means "transient: retry
 * with per-key backoff", except {@link InvalidInputError}s, which are permanent.
 */
export type Outcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeue'; readonly afterSeconds: number; readonly why: string }
  | { readonly kind: 'terminal'; readonly reason: string; readonly message: string };

export const done: Outcome = Object.freeze({ kind: 'done' });

export function requeueAfter(afterSeconds: number, why: string): Outcome {
  return { kind: 'requeue', afterSeconds, why };
}

export function terminal(reason: string, message: string): Outcome {
  return { kind: 'terminal', reason, message };
}

/** A controller's reconcile function. `D` is the controller's own narrow `deps` object. */
export type Reconcile<D> = (key: string, deps: D) => Promise<Outcome>;
