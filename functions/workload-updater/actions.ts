/**
 * The workload updater's three actions (reference node-drain-updates §3.2 step 7), each with
 * KubeVirt's events: create a workload-update migration, evict a VMI's launcher pod, abort the
 * workload-update migrations of a VMI. Each answers the error it hit (undefined when none); the
 * caller runs them concurrently and fails the pass with the first.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATIONS, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { currentVmiPod } from '../../shared/predicates/pods.ts';
import { kubevirtRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { errorText } from '../../shared/errors.ts';
import { WORKLOAD_UPDATE_EXPECTATIONS, type WorkloadUpdaterDeps } from './deps.ts';
import { renderWorkloadUpdateMigration } from './render-migration.ts';

export async function createMigration(vmi: VirtualMachineInstance, kvKey: string, deps: WorkloadUpdaterDeps): Promise<string | undefined> {
  try {
    const created = await deps.kube.create(MIGRATIONS, renderWorkloadUpdateMigration(vmi));
    await deps.expectations.creationObserved(WORKLOAD_UPDATE_EXPECTATIONS, kvKey);
    await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'SuccessfulCreate', `Created Migration ${created.metadata?.name ?? ''} for automated workload update`, EVENT_COMPONENT.workloadUpdater);
    return undefined;
  } catch (err) {
    await deps.expectations.creationObserved(WORKLOAD_UPDATE_EXPECTATIONS, kvKey);
    const message = `Error creating a Migration for automated workload update: ${errorText(err)}`;
    await recordEvent(deps, kubevirtRef(vmi), 'Warning', 'FailedCreate', message, EVENT_COMPONENT.workloadUpdater);
    return message;
  }
}

/**
 * Evicts the VMI's current launcher pod (policy/v1 Eviction; virt-api's webhook answers 429 for a
 * migrating strategy, which marks the VMI for evacuation instead). NotFound counts as success, as
 * upstream. Upstream dereferences a missing pod and crashes; here that is a FailedEvict and an error.
 */
export async function evictVmi(vmi: VirtualMachineInstance, podsOfNamespace: readonly V1Pod[], deps: WorkloadUpdaterDeps): Promise<string | undefined> {
  const pod = currentVmiPod(vmi, podsOfNamespace);
  if (!pod) {
    const message = 'Error detecting active pod for VMI during workload update: no active launcher pod';
    await recordEvent(deps, kubevirtRef(vmi), 'Warning', 'FailedEvict', message, EVENT_COMPONENT.workloadUpdater);
    return message;
  }
  let outcome = '<nil>';
  try {
    await deps.kube.evict(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
  } catch (err) {
    if (!(err instanceof NotFoundError)) {
      const message = `Error deleting VMI during automated workload update: ${errorText(err)}`;
      await recordEvent(deps, kubevirtRef(vmi), 'Warning', 'FailedEvict', message, EVENT_COMPONENT.workloadUpdater);
      return message;
    }
    outcome = errorText(err);
  }
  // Upstream formats the (nil) error into the success message: "…: <nil>".
  await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'SuccessfulEvict', `Initiated eviction of VMI as part of automated workload update: ${outcome}`, EVENT_COMPONENT.workloadUpdater);
  return undefined;
}

/** Deletes each of the VMI's non-final workload-update migrations. Failures are Normal events upstream. */
export async function abortChange(vmi: VirtualMachineInstance, ours: readonly VirtualMachineInstanceMigration[], deps: WorkloadUpdaterDeps): Promise<string | undefined> {
  const name = vmi.metadata?.name ?? '';
  let failure: string | undefined;
  for (const m of ours) {
    try {
      const deleted = await deps.kube.delete(MIGRATIONS, m.metadata?.namespace ?? '', m.metadata?.name ?? '');
      if (deleted) await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'SuccessfulChangeAbortion', `Aborted change for vmi: ${name}`, EVENT_COMPONENT.workloadUpdater);
    } catch (err) {
      failure = `Failed to abort change for vmi: ${name}: ${errorText(err)}`;
      await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'FailedChangeAbortion', failure, EVENT_COMPONENT.workloadUpdater);
    }
  }
  return failure;
}
