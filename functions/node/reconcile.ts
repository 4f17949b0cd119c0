/**
 * KubeVirt's node controller as one stateless reconcile, keyed by node name (reference
 * node-drain-updates §1): observe the node → is virt-handler's heartbeat alive → if not, mark the
 * node unschedulable, look for orphans (the virt-handler DaemonSet check) and fail the VMIs that
 * have no live launcher → re-check every existing node once a minute (a durable requeue-after
 * timer, never a sleeping function). Each pass also brings the node's TSC scheduling labels up to
 * date (KubeVirt's node topology updater: topology-updater.ts). There is no expectations gate: every write here is
 * idempotent, and the VMIs and pods are listed from the API, as KubeVirt does.
 */
import type { V1Node } from '@kubernetes/client-node';
import { DAEMON_SETS, NODES, PODS, VMIS, type VirtualMachineInstance } from '../../shared/api/index.ts';
import { NODE_NAME_LABEL, SCHEDULABLE_NODE_LABEL } from '../../shared/api/well-known.ts';
import { TransientError, errorText } from '../../shared/errors.ts';
import { kubevirtRef, nodeRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { done, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { periodicRecheck } from '../../shared/reconcile/periodic.ts';
import type { NodeDeps } from './deps.ts';
import { nodeLiveness, RECHECK_INTERVAL_SECONDS } from './liveness.ts';
import { failVmiPatch, isStuckPhase, NODE_UNRESPONSIVE_REASON, stuckVmis } from './stuck-vmis.ts';
import { syncTscLabels } from './topology-updater.ts';
import { VIRT_HANDLER_SELECTOR, virtHandlerVerdict } from './virt-handler-check.ts';

/** Upstream's patch body for the node (a strategic merge patch). */
const UNSCHEDULABLE = { metadata: { labels: { [SCHEDULABLE_NODE_LABEL]: 'false' } } };

/** Reconciles the node named by `key` (a bare node name: nodes are cluster-scoped). */
export async function reconcileNode(key: string, deps: NodeDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  // observe
  const node = await deps.kube.get(NODES, undefined, key, { resourceVersion: ctx.minResourceVersion });
  const liveness = nodeLiveness(node, deps.now());
  if (liveness.state === 'unknown') {
    // KubeVirt logs it and stops: a heartbeat that never parses would otherwise loop for ever.
    deps.log.warn('Failed to determine if node is responsive, will not reenqueue', { key, heartbeat: liveness.heartbeat });
    return done;
  }
  // act
  if (liveness.state === 'unresponsive') {
    if (node) await markUnschedulable(node, deps);
    await failStuckVmis(key, node, deps);
  }
  // KubeVirt's topology updater labels every node that reports a TSC frequency, alive or not.
  if (node) await syncTscLabels(node, deps);
  // A deleted node is not looked at again; every existing one is, once a minute, for ever.
  return node ? periodicRecheck(deps, 'node', key, RECHECK_INTERVAL_SECONDS, 'node re-check') : done;
}

async function markUnschedulable(node: V1Node, deps: NodeDeps): Promise<void> {
  // Only when the label reads exactly "true": a missing label or another value is left alone.
  if (node.metadata?.labels?.[SCHEDULABLE_NODE_LABEL] !== 'true') return;
  const name = node.metadata.name ?? '';
  await recordEvent(deps, nodeRef(node), 'Normal', NODE_UNRESPONSIVE_REASON, 'virt-handler is not responsive, marking node as unresponsive', EVENT_COMPONENT.node);
  try {
    await deps.kube.patch(NODES, undefined, name, { type: 'strategic', body: UNSCHEDULABLE });
  } catch (err) {
    throw new TransientError('FailedPatchNode', `failed to mark node ${name} as unschedulable: ${errorText(err)}`, { cause: err });
  }
}

async function failStuckVmis(nodeName: string, node: V1Node | undefined, deps: NodeDeps): Promise<void> {
  // The VMIs still labelled with this node, Running or Scheduled.
  const listed = await deps.kube.list(VMIS, undefined, { labelSelector: `${NODE_NAME_LABEL} in (${nodeName})` });
  const vmis = listed.items.filter(isStuckPhase);
  if (vmis.length === 0) return;
  if (node) await warnIfOrphaned(node, deps);
  const pods = await deps.kube.list(PODS, undefined, { fieldSelector: `spec.nodeName=${nodeName}` });
  const failures: string[] = [];
  // One after another, and on through failures, as upstream; the errors are reported together.
  for (const vmi of stuckVmis(vmis, pods.items)) {
    const failure = await failVmi(vmi, deps);
    if (failure) failures.push(failure);
  }
  if (failures.length > 0) throw new TransientError('FailedUpdate', failures.join('; '));
}

/** Fails one VMI; answers the error text when the patch failed. The event goes out either way. */
async function failVmi(vmi: VirtualMachineInstance, deps: NodeDeps): Promise<string | undefined> {
  const { namespace = '', name = '' } = vmi.metadata ?? {};
  const message = `virt-handler on node ${vmi.status?.nodeName ?? ''} is not responsive, marking VMI as failed`;
  await recordEvent(deps, kubevirtRef(vmi), 'Normal', NODE_UNRESPONSIVE_REASON, message, EVENT_COMPONENT.node);
  try {
    await deps.kube.patch(VMIS, namespace, name, { type: 'json', ops: failVmiPatch() });
    return undefined;
  } catch (err) {
    return `failed to move vmi ${name} in namespace ${namespace} to final state: ${errorText(err)}`;
  }
}

/** The orphan check: no virt-handler pod here while its DaemonSet is healthy deserves a Warning. */
async function warnIfOrphaned(node: V1Node, deps: NodeDeps): Promise<void> {
  const nodeName = node.metadata?.name ?? '';
  const handlers = await deps.kube.list(PODS, undefined, { fieldSelector: `spec.nodeName=${nodeName}`, labelSelector: VIRT_HANDLER_SELECTOR });
  if (handlers.items.length > 0) return;
  const sets = await deps.kube.list(DAEMON_SETS, undefined, { labelSelector: VIRT_HANDLER_SELECTOR });
  // A DaemonSet still rolling out explains the missing pod: no event (the re-check comes anyway).
  if (virtHandlerVerdict(0, sets.items) !== 'orphaned') return;
  await recordEvent(deps, nodeRef(node), 'Warning', NODE_UNRESPONSIVE_REASON, 'virt-handler is not present, there are orphaned vmis on this node. Run virt-handler on this node to migrate or remove them.', EVENT_COMPONENT.node);
}
