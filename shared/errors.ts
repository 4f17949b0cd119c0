/**
 * The project's one small error hierarchy (docs/architecture.md §6.7).
 *
 * Every error carries a `reason`: a CamelCase word that doubles as the Kubernetes Event reason,
 * the VMI condition reason and the `reason` metric label. Reasons that KubeVirt itself uses keep
 * KubeVirt's spelling (e.g. `FailedCreate`, `FailedPvcNotFound`).
 */
export class ReconcilerError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.reason = reason;
  }
}

/**
 * Input that can never become valid by retrying: a malformed manifest, an invalid VMI field, a
 * bad CLI flag, a malformed queue message. `field` names the offending field as a JSON-ish path
 * (`spec.domain.resources.requests.memory`) so a person can find it.
 */
export class InvalidInputError extends ReconcilerError {
  readonly field: string;
  constructor(field: string, message: string, reason = 'InvalidInput') {
    super(reason, `${field}: ${message}`);
    this.field = field;
  }
}

/** A VMI/VM feature we do not render or reconcile (yet). Permanent for that object. */
export class UnsupportedError extends InvalidInputError {
  constructor(field: string, message: string) {
    super(field, message, 'Unsupported');
  }
}

/** Worth retrying with backoff: a 409/429/5xx, a timeout, a table or queue hiccup. */
export class TransientError extends ReconcilerError {
  constructor(reason: string, message: string, options?: { cause?: unknown }) {
    super(reason, message, options);
  }
}

/** True when retrying cannot help and the key should be dead-lettered / reported at once. */
export function isPermanent(err: unknown): boolean {
  return err instanceof InvalidInputError;
}

/** The reason label for any thrown value, for logs and metrics. */
export function reasonOf(err: unknown): string {
  if (err instanceof ReconcilerError) return err.reason;
  return 'InternalError';
}

/** An error's message, for event texts, conditions, logs and joined error reports. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
