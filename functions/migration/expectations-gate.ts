/**
 * The migration controller's expectations (reference §d.2 step 5, §e), keyed by the migration key,
 * on the shared gate (shared/reconcile/expectations-gate.ts). KubeVirt lowers the record from pod
 * informer events; a stateless function lowers it from what its reads show: creation observed
 * once this migration's target pod is listed, deletion once the pod is gone or terminating. A
 * read that may lag gets one quorum re-read.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { claimCreations, expectationsGate, lowerFromPods, type Claim, type GateResult } from '../../shared/reconcile/expectations-gate.ts';
import { ATTACHMENT_POD_EXPECTATIONS, POD_EXPECTATIONS, type MigrationDeps } from './deps.ts';

/** `targetPods` lists this migration's target pods; `reread` lists them again with a quorum read. */
export function podExpectationsGate(key: string, targetPods: readonly V1Pod[], reread: () => Promise<readonly V1Pod[]>, deps: MigrationDeps): Promise<GateResult<readonly V1Pod[]>> {
  return expectationsGate(
    {
      key,
      scopes: [POD_EXPECTATIONS],
      what: 'target pod',
      reobserve: reread,
      lower: (pods, [record]) => lowerFromPods(deps, POD_EXPECTATIONS, key, record, pods),
    },
    targetPods,
    deps,
  );
}

/** The attachment pod a pass created is listed: its expectation is met (a no-op without one). */
export async function attachmentPodObserved(key: string, deps: MigrationDeps): Promise<void> {
  if (await deps.expectations.get(ATTACHMENT_POD_EXPECTATIONS, key)) await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
}

/** Records the target attachment pod's creation before it is made: of racing workers one creates. */
export function tryExpectAttachmentPod(key: string, deps: MigrationDeps): Promise<Claim> {
  return claimCreations(deps, ATTACHMENT_POD_EXPECTATIONS, key, 1, { whileLive: 1, afterTakeover: 0.1 });
}
