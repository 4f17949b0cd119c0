/**
 * Comparing resourceVersions. Kubernetes calls them opaque, but etcd's (and the sandbox's) are
 * revisions of one store: decimal integers that grow with every write. Only those are compared;
 * anything else is "cannot tell", and the caller takes the safe path.
 */

/** True when both are decimal revisions and `a` ≥ `b`; false when either is not (cannot tell). */
export function isAtLeastRevision(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !DECIMAL.test(a) || !DECIMAL.test(b)) return false;
  return BigInt(a) >= BigInt(b);
}

const DECIMAL = /^\d{1,30}$/;
