/**
 * The one status writer of the reconciles (the last step, "status from what was observed"): a
 * PUT of the object's `/status` with the status this pass computed, made only when it differs from
 * the status the pass read — a pass that changed nothing writes nothing. An absent status differs
 * from an empty one by default, as KubeVirt's DeepEqual of a nil and an empty status does (its
 * first pass writes the empty status); a controller that compares otherwise says how. The PUT carries the resourceVersion the pass read, so a status computed from a
 * stale object is refused with a Conflict and the key is retried.
 *
 * Gone meanwhile (deleted, its finalizer removed): nothing to report on, `undefined`. Any other
 * failure is transient — KubeVirt re-enqueues a key whose status update failed — and keeps its
 * own reason when it has one (a Conflict, a 5xx), else `FailedStatusUpdate`.
 */
import { errorText, TransientError } from '../errors.ts';
import type { KubeClient, KubeObject } from '../kube/client.ts';
import { NotFoundError } from '../kube/errors.ts';
import type { Resource } from '../api/resources.ts';
import { isDeepStrictEqual } from 'node:util';
import { isWorkerCrash } from './worker-crash.ts';

export interface WriteStatusOptions<S> {
  /** When `next` and the status as read are the same (default: deep equality, absent ≠ empty). */
  readonly equal?: (next: S, read: S | undefined) => boolean;
}

/** The comparison of controllers for which an absent status is an empty one. */
export function absentIsEmpty<S>(next: S, read: S | undefined): boolean {
  return isDeepStrictEqual(next, read ?? {});
}

/** Writes `status` onto `obj` (as read); the written object, `obj` itself when unchanged, or `undefined` when it is gone. */
export async function writeStatus<S, T extends KubeObject & { status?: S | undefined }>(
  kube: Pick<KubeClient, 'update'>,
  res: Resource<T>,
  obj: T,
  status: S,
  opts: WriteStatusOptions<S> = {},
): Promise<T | undefined> {
  const equal = opts.equal ?? isDeepStrictEqual;
  if (equal(status, obj.status)) return obj;
  try {
    return await kube.update(res, { ...obj, status }, { subresource: 'status' });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    if (isWorkerCrash(err) || err instanceof TransientError) throw err;
    throw new TransientError('FailedStatusUpdate', errorText(err), { cause: err });
  }
}
