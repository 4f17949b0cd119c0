/**
 * Rendering errors beyond the shared hierarchy's invalid/unsupported input.
 */
import { ReconcilerError } from '../errors.ts';

/**
 * A PVC (or DataVolume's PVC) the VMI uses does not exist yet. Not permanent: it may be
 * created in a moment, so the reconciler reports `FailedPvcNotFound` and tries again, as
 * KubeVirt does.
 */
export class PvcNotFoundError extends ReconcilerError {
  readonly claimName: string;
  constructor(claimName: string) {
    super('FailedPvcNotFound', `didn't find PVC ${claimName}`);
    this.claimName = claimName;
  }
}
