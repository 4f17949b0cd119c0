/**
 * The pod expectations gate of the migration controller (reference §d.2 step 5, §e), keyed by the
 * migration key. KubeVirt lowers the record from pod informer events; a stateless function lowers
 * it from what its reads show: creation observed once this migration's target pod is listed,
 * deletion once the pod is gone or terminating. A read that may lag gets one quorum re-read.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { EXPECTATIONS_TIMEOUT_MS, isExpectationSatisfied } from '../../shared/state/port.ts';
import { podKey } from '../../shared/predicates/pods.ts';
import { ATTACHMENT_POD_EXPECTATIONS, POD_EXPECTATIONS, type MigrationDeps } from './deps.ts';

export type Gate = { readonly kind: 'pass'; readonly fresh: boolean } | { readonly kind: 'wait'; readonly seconds: number };

/**
 * `targetPods` lists this migration's target pods; `reread` lists them again with a quorum read.
 * Returns whether the sync may act, and whether the re-read replaced the observation.
 */
export async function podExpectationsGate(key: string, targetPods: readonly V1Pod[], reread: () => Promise<readonly V1Pod[]>, deps: MigrationDeps): Promise<Gate> {
  const now = deps.now();
  const record = await deps.expectations.get(POD_EXPECTATIONS, key);
  if (!record || isExpectationSatisfied(record, now)) return { kind: 'pass', fresh: false };

  const lower = async (pods: readonly V1Pod[]): Promise<boolean> => {
    if (record.add > 0 && pods.length > 0) await deps.expectations.creationObserved(POD_EXPECTATIONS, key);
    const present = new Map(pods.map((p) => [podKey(p), p]));
    for (const k of record.deleteKeys) {
      const p = present.get(k);
      if (!p || p.metadata?.deletionTimestamp) await deps.expectations.deletionObserved(POD_EXPECTATIONS, key, k);
    }
    return deps.expectations.satisfied(POD_EXPECTATIONS, key, now);
  };
  if (await lower(targetPods)) return { kind: 'pass', fresh: false };
  if (await lower(await reread())) return { kind: 'pass', fresh: true };

  // Per-key serialization: after this long the worker that recorded the create is gone.
  const takeoverMs = deps.createTakeoverMs ?? EXPECTATIONS_TIMEOUT_MS;
  if (now - record.setAt >= takeoverMs) {
    deps.log.warn('taking over a target pod expectation that was never observed', { key, setAt: record.setAt });
    await deps.expectations.delete(POD_EXPECTATIONS, key);
    return { kind: 'pass', fresh: true };
  }
  return { kind: 'wait', seconds: Math.max(1, (record.setAt + takeoverMs - now) / 1000) };
}

/** The attachment pod a pass created is listed: its expectation is met (a no-op without one). */
export async function attachmentPodObserved(key: string, deps: MigrationDeps): Promise<void> {
  if (await deps.expectations.get(ATTACHMENT_POD_EXPECTATIONS, key)) await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
}

/**
 * Records the target attachment pod's creation before it is made (a conditional write: of racing
 * workers one creates). A live record means an earlier pass created it and no read shows it yet:
 * wait; one older than the takeover time was left by a worker that died before its create.
 */
export async function tryExpectAttachmentPod(key: string, deps: MigrationDeps): Promise<Gate> {
  const now = deps.now();
  if (await deps.expectations.tryExpectCreations(ATTACHMENT_POD_EXPECTATIONS, key, 1, now)) return { kind: 'pass', fresh: false };
  const record = await deps.expectations.get(ATTACHMENT_POD_EXPECTATIONS, key);
  const takeoverMs = deps.createTakeoverMs ?? EXPECTATIONS_TIMEOUT_MS;
  if (record && !isExpectationSatisfied(record, now) && now - record.setAt < takeoverMs) return { kind: 'wait', seconds: 1 };
  await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
  return { kind: 'wait', seconds: 0.1 };
}
