/**
 * KubeVirt's VirtualMachineInstanceReplicaSet controller as one stateless reconcile
 * (reference-replicas-pools-clones.md §1.2): observe → API-version annotations → spec check →
 * expectations gate → claim (release / adopt) → scale, then clean → status.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { KUBEVIRT_API_VERSION } from '../../shared/api/well-known.ts';
import { errorText, TransientError } from '../../shared/errors.ts';
import { KubeInvalidError, NotFoundError } from '../../shared/kube/errors.ts';
import { adoptPatch, controllerRef, releasePatch } from '../../shared/predicates/owner-refs.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { isWorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import { classifyVmis } from './claim.ts';
import { BURST_REPLICAS, RS_CREATED, RS_EXPECTATIONS, type RsDeps } from './deps.ts';
import { expectationsGate } from './expectations-gate.ts';
import { partitionVmis } from './partition.ts';
import { KIND_VMI_REPLICA_SET, vmiForReplicaSet } from './render-vmi.ts';
import { decideClean, decideScale, vmiKey } from './scale.ts';
import { checkSpec, desiredReplicas, withApiVersionAnnotations } from './spec-check.ts';
import { planStatus } from './status.ts';
import { eventRecorder } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

/** Reconciles the replica set named by `key` (`namespace/name`). */
export async function reconcileReplicaSet(key: string, deps: RsDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);

  // observe
  const rs = await deps.kube.get(VMI_REPLICA_SETS, namespace, name, { resourceVersion: ctx.minResourceVersion });
  if (!rs) {
    // Gone: its VMIs go by garbage collection (owner references); nothing left to wait for.
    await deps.expectations.delete(RS_EXPECTATIONS, key);
    await deps.expectations.delete(RS_CREATED, key);
    return done;
  }

  // API-version annotations first; the update's own event brings the key back.
  const annotated = withApiVersionAnnotations(rs);
  if (annotated) {
    await deps.kube.update(VMI_REPLICA_SETS, annotated);
    return done;
  }

  // An invalid spec is dropped: no status, no retry, until the user changes it.
  const spec = checkSpec(rs);
  if (spec.kind === 'invalid') {
    deps.log.warn('invalid replica set spec; ignored', { key, why: spec.why });
    return done;
  }

  // Every VMI of the namespace, as a quorum read: our decisions must never rest on a lagging
  // view (a stale list that misses VMIs we created would create them again).
  const all = (await deps.kube.list(VMIS, namespace)).items;
  const gate = await expectationsGate(key, all, deps);

  // claim: release what no longer matches, adopt matching orphans
  const claims = classifyVmis(rs, spec.selector, all);
  const claimed = [...claims.claimed, ...(await adoptAndRelease(rs, claims.adopt, claims.release, deps))];

  const { active, toClean } = partitionVmis(claimed);
  const burst = deps.burstReplicas ?? BURST_REPLICAS;
  const deleting = rs.metadata?.deletionTimestamp !== undefined && rs.metadata.deletionTimestamp !== null;

  // scale, then clean (only after a successful scale)
  let scaleError: string | undefined;
  if (gate.kind === 'pass' && rs.spec.paused !== true && !deleting) {
    scaleError = await scale(key, rs, active, burst, deps);
    if (scaleError === undefined && toClean.length > 0) scaleError = await clean(key, rs, decideClean(toClean, burst), deps);
  }

  // status, from the VMIs counted before this pass's actions (Q-R4)
  await writeStatus(rs, active, scaleError, deps);

  if (scaleError !== undefined) throw new TransientError(desiredReplicas(rs) > active.length ? 'FailedCreate' : 'FailedDelete', scaleError);
  if (gate.kind === 'wait') return requeueAfter(gate.seconds, 'replica set expectations not yet satisfied');
  return done;
}

/**
 * Adopts and releases (§0), checking once with a live read that the replica set is still the one
 * we read and not being deleted before adopting anything. Errors are collected and thrown together.
 * Answers the adopted VMIs (as the patches returned them).
 */
async function adoptAndRelease(rs: VirtualMachineInstanceReplicaSet, adopt: readonly VirtualMachineInstance[], release: readonly VirtualMachineInstance[], deps: RsDeps): Promise<VirtualMachineInstance[]> {
  const ns = rs.metadata?.namespace ?? '';
  const uid = rs.metadata?.uid ?? '';
  const errors: string[] = [];
  const adopted: VirtualMachineInstance[] = [];

  await Promise.all(
    release.map(async (vmi) => {
      try {
        await deps.kube.patch(VMIS, ns, vmi.metadata?.name ?? '', releasePatch(vmi, uid));
      } catch (err) {
        if (isWorkerCrash(err)) throw err;
        // Gone, or no longer ours to release: nothing to do.
        if (!(err instanceof NotFoundError) && !(err instanceof KubeInvalidError)) errors.push(errorText(err));
      }
    }),
  );

  if (adopt.length > 0) {
    const canAdopt = await canAdoptError(rs, deps);
    if (canAdopt) errors.push(...adopt.map(() => canAdopt));
    else {
      const ref = controllerRef(KUBEVIRT_API_VERSION, KIND_VMI_REPLICA_SET, rs);
      await Promise.all(
        adopt.map(async (vmi) => {
          try {
            adopted.push(await deps.kube.patch(VMIS, ns, vmi.metadata?.name ?? '', adoptPatch(vmi, ref)));
          } catch (err) {
            if (isWorkerCrash(err)) throw err;
            if (!(err instanceof NotFoundError)) errors.push(errorText(err));
          }
        }),
      );
    }
  }
  if (errors.length > 0) throw new TransientError('ClaimFailed', errors.join('; '));
  return adopted;
}

/** KubeVirt's `CanAdopt`: a live GET; the replica set must still have our UID and not be deleting. */
async function canAdoptError(rs: VirtualMachineInstanceReplicaSet, deps: RsDeps): Promise<string | undefined> {
  const ns = rs.metadata?.namespace ?? '';
  const name = rs.metadata?.name ?? '';
  const fresh = await deps.kube.get(VMI_REPLICA_SETS, ns, name);
  if (!fresh) return `original ReplicaSet ${ns}/${name} is gone: got uid <none>, wanted ${rs.metadata?.uid ?? ''}`;
  if (fresh.metadata?.uid !== rs.metadata?.uid) return `original ReplicaSet ${ns}/${name} is gone: got uid ${fresh.metadata?.uid ?? ''}, wanted ${rs.metadata?.uid ?? ''}`;
  if (fresh.metadata?.deletionTimestamp) return `${ns}/${name} has just been deleted at ${String(fresh.metadata.deletionTimestamp)}`;
  return undefined;
}

/** Creates or deletes toward `spec.replicas`; answers the first error's text. */
async function scale(key: string, rs: VirtualMachineInstanceReplicaSet, active: readonly VirtualMachineInstance[], burst: number, deps: RsDeps): Promise<string | undefined> {
  const decision = decideScale(active, desiredReplicas(rs), burst);
  if (decision.kind === 'none') return undefined;
  if (decision.kind === 'delete') {
    return deleteVmis(key, rs, decision.vmis, deps, {
      ok: (v) => `Stopped the virtual machine by deleting the virtual machine instance ${v.metadata?.uid ?? ''}`,
      failed: (v, m) => `Error deleting virtual machine instance ${v.metadata?.name ?? ''}: ${m}`,
    });
  }
  return createVmis(key, rs, decision.count, deps);
}

async function createVmis(key: string, rs: VirtualMachineInstanceReplicaSet, count: number, deps: RsDeps): Promise<string | undefined> {
  // Conditional: of two workers racing on one key (one presumed dead but not), only one creates.
  if (!(await deps.expectations.tryExpectCreations(RS_EXPECTATIONS, key, count, deps.now()))) {
    throw new TransientError('FailedCreate', 'another worker is creating virtual machine instances for this replica set');
  }
  const vmi = vmiForReplicaSet(rs);
  const results = await Promise.allSettled(Array.from({ length: count }, () => deps.kube.create(VMIS, structuredClone(vmi))));
  const crash = results.find((r) => r.status === 'rejected' && isWorkerCrash(r.reason));
  if (crash) throw (crash as PromiseRejectedResult).reason;

  const names: string[] = [];
  const events: EventSpec[] = [];
  let firstError: string | undefined;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      names.push(vmiKey(r.value));
      events.push(['Normal', 'SuccessfulCreate', `Started the virtual machine by creating the new virtual machine instance ${r.value.metadata?.name ?? ''}`]);
    } else {
      const m = errorText(r.reason);
      firstError ??= m;
      await deps.expectations.creationObserved(RS_EXPECTATIONS, key);
      events.push(['Warning', 'FailedCreate', `Error creating virtual machine instance: ${m}`]);
    }
  }
  // The burst is over: its creations are known by name (expectations-gate.ts).
  await deps.expectations.expectDeletions(RS_CREATED, key, names, deps.now());
  await emitEvents(deps, rs, events);
  return firstError;
}

/** Finished and unknown VMIs (§1.2 Clean): their deletion replaces the creation expectation, as upstream. */
function clean(key: string, rs: VirtualMachineInstanceReplicaSet, vmis: readonly VirtualMachineInstance[], deps: RsDeps): Promise<string | undefined> {
  return deleteVmis(key, rs, vmis, deps, {
    ok: (v) => `Deleted finished virtual machine: ${v.metadata?.uid ?? ''}`,
    failed: (v, m) => `Error deleting finished virtual machine ${v.metadata?.name ?? ''}: ${m}`,
  });
}

interface DeleteTexts {
  ok(vmi: VirtualMachineInstance): string;
  failed(vmi: VirtualMachineInstance, message: string): string;
}

async function deleteVmis(key: string, rs: VirtualMachineInstanceReplicaSet, vmis: readonly VirtualMachineInstance[], deps: RsDeps, texts: DeleteTexts): Promise<string | undefined> {
  await deps.expectations.expectDeletions(RS_EXPECTATIONS, key, vmis.map(vmiKey), deps.now());
  const results = await Promise.allSettled(vmis.map((v) => deps.kube.delete(VMIS, v.metadata?.namespace ?? '', v.metadata?.name ?? '')));
  const crash = results.find((r) => r.status === 'rejected' && isWorkerCrash(r.reason));
  if (crash) throw (crash as PromiseRejectedResult).reason;

  const events: EventSpec[] = [];
  let firstError: string | undefined;
  for (const [i, r] of results.entries()) {
    const vmi = vmis[i]!;
    if (r.status === 'fulfilled') {
      events.push(['Normal', 'SuccessfulDelete', texts.ok(vmi)]);
    } else {
      const m = errorText(r.reason);
      firstError ??= m;
      await deps.expectations.deletionObserved(RS_EXPECTATIONS, key, vmiKey(vmi));
      events.push(['Warning', 'FailedDelete', texts.failed(vmi, m)]);
    }
  }
  await emitEvents(deps, rs, events);
  return firstError;
}

async function writeStatus(rs: VirtualMachineInstanceReplicaSet, active: readonly VirtualMachineInstance[], scaleError: string | undefined, deps: RsDeps): Promise<void> {
  const plan = planStatus(rs, active, scaleError, new Date(deps.now()).toISOString());
  if (!plan) return;
  // planStatus decided the write: the status is written as planned, or the replica set is gone.
  if (!(await writeObjectStatus(deps.kube, VMI_REPLICA_SETS, rs, plan.status, { equal: () => false }))) return;
  if (plan.pausedEvent) await event(deps, rs, 'Normal', plan.pausedEvent.reason, plan.pausedEvent.message);
}

/** An Event to record: type, reason, message. */
type EventSpec = readonly ['Normal' | 'Warning', string, string];

/**
 * Records a pass's events together, once its expectation writes are done: started earlier, an
 * event's rejection (a crashed worker) could be left unobserved while an await in between threw.
 */
async function emitEvents(deps: RsDeps, rs: VirtualMachineInstanceReplicaSet, events: readonly EventSpec[]): Promise<void> {
  const results = await Promise.allSettled(events.map(([type, reason, text]) => event(deps, rs, type, reason, text)));
  const crash = results.find((r) => r.status === 'rejected');
  if (crash) throw (crash as PromiseRejectedResult).reason;
}

/** Events about the replica set (best effort, shared/reconcile/events.ts). */
const event = eventRecorder(KUBEVIRT_API_VERSION, KIND_VMI_REPLICA_SET, EVENT_COMPONENT.replicaset);

