/**
 * client-node's `Watch` with an inactivity limit we choose.
 *
 * client-node 2.0.1 aborts a watch stream that has delivered no bytes for 30 s (its private
 * `requestTimeoutMs`), as a `TimeoutError`. A Kubernetes API server sends a quiet watch nothing for
 * longer than that: a bookmark about once a minute when asked for them (kube-apiserver's watch
 * cache; the sandbox's API server every 60 s), nothing at all otherwise. So every watch of a
 * resource that did not change for 30 s ended, its client re-watched from a version that had
 * often been compacted meanwhile, and relisted: the relay relisted each of its ~30 quiet
 * resources every 30 s, its views went without those copies during the relist, and the VMI
 * function fell back to the API server for the keys that arrived then (the steady-rate p99 of
 * 2026-12-07, docs/scale.md). Each caller sets a limit its server's traffic keeps it under: the
 * relay's reflector half again the bookmark cadence, the sandbox's informers (no bookmarks) past
 * the server's own end of the stream.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';

/** client-node's watch with `inactivityMs` as the longest silence it accepts before ending the stream. */
export function watchClient(kc: KubeConfig, inactivityMs: number): Watch {
  if (!Number.isFinite(inactivityMs) || inactivityMs <= 0 || inactivityMs > 2 ** 31 - 1) throw new RangeError(`watch inactivity limit must be 1…${2 ** 31 - 1} ms, got ${inactivityMs}`);
  const watch = new Watch(kc);
  const fields = watch as unknown as { requestTimeoutMs?: number };
  // The field is client-node's: a version without it would silently keep the 30 s limit.
  if (typeof fields.requestTimeoutMs !== 'number') throw new Error('client-node Watch has no requestTimeoutMs: its inactivity limit cannot be set (see shared/kube/watch.ts)');
  fields.requestTimeoutMs = inactivityMs;
  return watch;
}
