/**
 * KubeVirt's evacuation controller as one stateless reconcile, keyed by **node name** (reference
 * node-drain-updates §2): observe the node → expectations gate → which VMIs must leave (the drain
 * taint, or virt-api's eviction mark) → the filters → one `kubevirt-evacuation-` migration per
 * candidate, all at once. There are no limits here: the migration controller holds the
 * migrations back (5 per cluster, 2 outbound per node), as KubeVirt does since the migration
 * priority queue went GA.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATIONS, NODES, PODS, VMIS, type VirtualMachineInstance } from '../../shared/api/index.ts';
import { isFinalMigration } from '../../shared/api/vmi-eviction.ts';
import { APP_LABEL, NODE_NAME_LABEL } from '../../shared/api/well-known.ts';
import { TransientError, errorText } from '../../shared/errors.ts';
import { kubevirtRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { done, type Outcome, type ReconcileContext, waitAfter } from '../../shared/reconcile/outcome.ts';
import { answeredCreations, expectationsGate } from '../../shared/reconcile/expectations-gate.ts';
import { selectCandidates, vmisToConsider } from './candidates.ts';
import { EVACUATION_EXPECTATIONS, type EvacuationDeps } from './deps.ts';
import { renderEvacuationMigration } from './render-migration.ts';

export async function reconcileEvacuation(nodeName: string, deps: EvacuationDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  // observe
  const node = await deps.kube.get(NODES, undefined, nodeName, { resourceVersion: ctx.minResourceVersion });
  if (!node) {
    await deps.expectations.delete(EVACUATION_EXPECTATIONS, nodeName);
    return done;
  }
  // expectations gate
  const gate = await expectationsGate(answeredCreations(EVACUATION_EXPECTATIONS, nodeName, 'evacuation migration'), undefined, deps);
  if (gate.kind === 'wait') return waitAfter(gate.seconds, 'evacuation expectations pending');
  const config = await deps.clusterConfig();
  // KubeVirt's VMI cache index by status.nodeName; the kubevirt.io/nodeName label is written with
  // it (hand-off, migration), so the list is narrowed by the label and checked on the field.
  const vmis = await deps.kube.list(VMIS, undefined, { labelSelector: `${NODE_NAME_LABEL}=${nodeName}` });
  const onNode = vmis.items.filter((v) => v.status?.nodeName === nodeName);
  // desired
  const considered = vmisToConsider(node, onNode, config.migrations.nodeDrainTaintKey, deps.now());
  if (considered.length === 0) return done;
  const [migrations, pods] = await Promise.all([deps.kube.list(MIGRATIONS, undefined), launcherPods(considered, deps)]);
  const unfinished = migrations.items.filter((m) => !isFinalMigration(m));
  const { candidates, nonMigratable } = selectCandidates(considered, unfinished, pods, config.evictionStrategy);
  if (candidates.length === 0 && nonMigratable.length === 0) return done;
  // act
  await deps.expectations.expectCreations(EVACUATION_EXPECTATIONS, nodeName, candidates.length, deps.now());
  const failures = await Promise.all(candidates.map((vmi) => createMigration(vmi, nodeName, deps)));
  const firstFailure = failures.find((f) => f !== undefined);
  if (firstFailure) throw new TransientError('FailedCreate', firstFailure);
  return done;
}

/**
 * KubeVirt lowers the node's record when the migration's add event arrives. Here the create's
 * answer is the observation (this pass's reads are quorum reads, and so are the next pass's), so
 * a record left unsatisfied means a pass died between its expectation and its creates: that node
 * waits until the record expires (5 minutes), and is looked at again then.
 */
/** The launcher (and target) pods of the considered VMIs' namespaces: the KubeVirtPod informer. */
async function launcherPods(vmis: readonly VirtualMachineInstance[], deps: EvacuationDeps): Promise<V1Pod[]> {
  const namespaces = [...new Set(vmis.map((v) => v.metadata?.namespace ?? ''))];
  const lists = await Promise.all(namespaces.map((ns) => deps.kube.list(PODS, ns, { labelSelector: APP_LABEL })));
  return lists.flatMap((l) => l.items);
}

/** Creates one evacuation migration; answers the error text on failure. Events as upstream. */
async function createMigration(vmi: VirtualMachineInstance, nodeName: string, deps: EvacuationDeps): Promise<string | undefined> {
  try {
    const created = await deps.kube.create(MIGRATIONS, renderEvacuationMigration(vmi, nodeName));
    await deps.expectations.creationObserved(EVACUATION_EXPECTATIONS, nodeName);
    await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'SuccessfulCreate', `Created Migration ${created.metadata?.name ?? ''}`, EVENT_COMPONENT.evacuation);
    return undefined;
  } catch (err) {
    await deps.expectations.creationObserved(EVACUATION_EXPECTATIONS, nodeName);
    await recordEvent(deps, kubevirtRef(vmi), 'Warning', 'FailedCreate', `Error creating a Migration: ${errorText(err)}`, EVENT_COMPONENT.evacuation);
    return `Error creating a Migration: ${errorText(err)}`;
  }
}
