/**
 * The orphan check (reference node-drain-updates §1.2 step 3.2): when a node has no virt-handler
 * pod, is that because virt-handler is not running anywhere (its DaemonSet is rolling out or
 * broken — wait) or because this node lost it while the DaemonSet is healthy (warn: the VMIs are
 * orphaned)?
 */
import type { V1DaemonSet } from '@kubernetes/client-node';
import { TransientError } from '../../shared/errors.ts';

export const VIRT_HANDLER_SELECTOR = 'kubevirt.io=virt-handler';

export type HandlerVerdict = 'present' | 'orphaned' | 'daemonset-not-running';

/** "Running" unless desired differs from both the scheduled and the ready count. */
export function isDaemonSetRunning(ds: V1DaemonSet): boolean {
  const desired = ds.status?.desiredNumberScheduled ?? 0;
  const scheduled = ds.status?.currentNumberScheduled ?? 0;
  const ready = ds.status?.numberReady ?? 0;
  return !(desired !== scheduled && desired !== ready);
}

/**
 * The verdict from the node's virt-handler pods and every virt-handler DaemonSet. There must be
 * exactly one DaemonSet; otherwise the pass fails (KubeVirt retries it, typo and all).
 */
export function virtHandlerVerdict(handlerPodsOnNode: number, daemonSets: readonly V1DaemonSet[]): HandlerVerdict {
  if (handlerPodsOnNode > 0) return 'present';
  if (daemonSets.length !== 1) throw new DaemonSetCountError(daemonSets.length);
  return isDaemonSetRunning(daemonSets[0]!) ? 'orphaned' : 'daemonset-not-running';
}

/** Zero or several virt-handler DaemonSets: a transient error, as upstream (rate-limited retry). */
export class DaemonSetCountError extends TransientError {
  readonly count: number;
  constructor(count: number) {
    // Upstream's message, typo included, so logs match KubeVirt's.
    super('VirtHandlerDaemonSetCount', `shouuld only be running one virt-handler DaemonSet (found ${count})`);
    this.count = count;
  }
}
