/**
 * KubeVirt's migration controller as one stateless reconcile (reference §d):
 * observe (migration, VMI, the VMI's pods: 3 reads) → expectations gate → sync (one kind of
 * mutation; a target pod only after the parallel limits grant a lease) → status from what was
 * observed → garbage collection once final.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { APP_LABEL, CREATED_BY_LABEL, HOTPLUG_DISK_APP, vmiPodsSelector, KIND_MIGRATION, KIND_VMI, MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { errorText, InvalidInputError, TransientError } from '../../shared/errors.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';
import { podKey } from '../../shared/predicates/pods.ts';
import { EVACUATION_ANNOTATION, WORKLOAD_UPDATE_ANNOTATION } from './backoff.ts';
import { ATTACHMENT_POD_EXPECTATIONS, POD_EXPECTATIONS, type MigrationDeps } from './deps.ts';
import { attachmentPodObserved, podExpectationsGate, tryExpectAttachmentPod } from './expectations-gate.ts';
import { renderTargetAttachmentPod, targetAttachmentClaims, targetAttachmentPod } from './attachment-pod.ts';
import { collectGarbage } from './gc.ts';
import type { PersistentStatePvcs } from './backend-storage.ts';
import { dropUnhandedTarget, followUpBackend, prepareTargetBackend, recoverInterrupted } from './backend-pvcs.ts';
import { needsRecovery } from './recovery.ts';
import { abortPatch, handoffPatch, targetDownPatch } from './handoff.ts';
import { acquireSlots, LIMIT_RECHECK_SECONDS, limitsOf, releaseSlots, retrySecondsForPriority, runningMigrations, type RunningMigration } from './limits.ts';
import { handedOff, isFinal, nextPhase } from './phases.ts';
import { matchPolicy, resolveMigrationConfiguration } from './policies.ts';
import { decideSync, type Observed, type SyncAction } from './sync.ts';
import { launcherClaimNames, renderClaimInfo } from '../../shared/storage/launcher-claims.ts';
import { missingSidecarConfigMap, namespaceLimits, networkResources } from '../../shared/template/read-cluster-facts.ts';
import { renderMigrationTargetPod, sourcePodOf, targetPodsOf } from './target-pod.ts';
import { syncTargetPodNetworkInfo } from './target-network-info.ts';
import { targetReadyAnnotationPatch } from './target-ready.ts';
import { computeMigration, planWrites } from './update-status.ts';
import { pendingBlock, BLOCKED_BY_BACKUP, type PendingBlock } from './pending-blocks.ts';
import { hostModelRequirements, noSuitableHostModelNode, runtimeUserPatch } from './target-prep.ts';
import { gateEnabled } from '../../shared/config/cluster-config.ts';
import { MIGRATIONS, NODES, PODS, PVCS, VMIS } from '../../shared/api/resources.ts';
import { vmiHasHotplugVolumes } from '../../shared/storage/hotplug-volumes.ts';
import { kubevirtRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';

/** Reconciles the migration named by `key` (`namespace/name`). */
export async function reconcileMigration(key: string, deps: MigrationDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;

  // observe
  const migration = await deps.kube.get(MIGRATIONS, namespace, name, { resourceVersion: rv });
  if (!migration) {
    // Gone (the finalizer normally lets us see it final first): drop what it may still hold.
    await deps.expectations.delete(POD_EXPECTATIONS, key);
    await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
    await releaseSlots(deps.leases, key, undefined);
    return done;
  }
  const vmiName = migration.spec.vmiName ?? '';
  const vmi = vmiName ? await deps.kube.get(VMIS, namespace, vmiName, { resourceVersion: rv }) : undefined;
  if (!vmi) return vmiGone(key, migration, deps);
  let observed = await observe(migration, vmi, deps, rv);

  // expectations gate: unsatisfied → no sync this pass, but the status still follows what we see
  const gate = await podExpectationsGate(key, observed.targetPod ? [observed.targetPod] : [], async () => {
    observed = await observe(migration, vmi, deps, undefined);
    return observed.targetPod ? [observed.targetPod] : [];
  }, deps);

  // An attachment pod this migration expected is there: its creation is observed.
  if (observed.attachmentPod && (migration.status?.phase ?? '') === 'Pending') await attachmentPodObserved(key, deps);

  // What holds a migration in Pending (pending-blocks.ts): a running backup, utility volumes.
  const startPhase = migration.status?.phase ?? '';
  const startedPending = startPhase === '' || startPhase === 'Pending';
  const block = startedPending && !migration.metadata?.deletionTimestamp ? pendingBlock(migration, observed.vmi, (await deps.clusterConfig()).migrations.utilityVolumesTimeout, deps.now()) : undefined;

  // sync
  let wait: { seconds: number; why: string } | undefined;
  let persistentStatePvcs: PersistentStatePvcs | undefined;
  let quotaRejected = false;
  if (gate.kind === 'wait') wait = { seconds: gate.seconds, why: 'target pod expectations not yet satisfied' };
  else {
    const action = decideSync(observed, deps.now());
    // A blocked migration creates no target pod (nor attachment pod) and is not handed off.
    const held = block !== undefined && (action.kind === 'create-target-pod' || action.kind === 'create-attachment-pod' || action.kind === 'hand-off');
    const acted = held || (block !== undefined && action.kind === 'none') ? await actOnBlock(block!, observed, deps) : await act(key, action, observed, deps);
    observed = acted.observed;
    wait = acted.wait;
    persistentStatePvcs = acted.persistentStatePvcs;
    quotaRejected = acted.quotaRejected === true;
  }

  // status
  let result = nextPhase({ migration, vmi: observed.vmi, targetPod: observed.targetPod, otherMigrationActive: otherMigrationActive(observed), hotplug: observed.hotplug, attachmentPod: observed.attachmentPod, ...(block && { blocked: block.kind === 'utility-volumes-timeout' ? { failure: block.failure } : {} }) });
  // Interrupted while the backend state was on its way to a claim of the migration's own: the
  // recovery Job decides which claim holds it before the migration may end.
  if (result.interrupted && needsRecovery(migration, observed.vmi)) {
    const recovery = await recoverInterrupted(migration, result, deps);
    for (const step of recovery.done) deps.log.info(step, { key });
    result = recovery.result;
    if (recovery.waitSeconds !== undefined) wait ??= { seconds: recovery.waitSeconds, why: 'migration recovery job still running' };
  }
  const holder = key;
  const sourceNode = migration.status?.migrationState?.sourceNode ?? vmi.status?.nodeName;
  let holdsLease = false;
  if (isFinal(result.phase)) {
    if (result.steps.length > 0) {
      // KubeVirt reports the interruption even when its recovery Job found the migration finished.
      if (result.recoveredFrom) await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedMigration', result.recoveredFrom);
      else if (result.phase === 'Succeeded') await event(deps, migration, KIND_MIGRATION, 'Normal', 'SuccessfulMigration', 'Source node reported migration succeeded');
      else await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedMigration', result.failure ?? 'Migration failed');
    }
  } else if (observed.targetPod && sourceNode) {
    // Renew: the lease outlives a crashed holder by at most its TTL, never a live one.
    holdsLease = true;
    const config = await deps.clusterConfig();
    const refused = await acquireSlots(deps.leases, { holder, sourceNode, limits: limitsOf(config.migrations), now: deps.now(), ttlMs: leaseTtl(deps) });
    if (refused) deps.log.warn('could not renew a migration lease after it expired', { key, limit: refused });
  }
  const desired = computeMigration({ migration, vmi: observed.vmi, result, sourcePod: observed.sourcePod, now: new Date(deps.now()).toISOString(), persistentStatePvcs, pending: { startedPending, block, quotaRejected } });
  // backend storage: the migration's own target PVC handed over to the VMI, or cleaned up
  for (const step of await followUpBackend(desired, observed.vmi, result.phase, deps)) deps.log.info(step, { key });
  // The target pod learns when its domain was ready (KubeVirt: after the backend hand-off, on a
  // pass that starts Running); the migration's status is written after it, as there.
  const readyOps = targetReadyAnnotationPatch(migration, observed.vmi, observed.targetPod, result);
  if (readyOps && observed.targetPod?.metadata?.name) await deps.kube.patch(PODS, namespace, observed.targetPod.metadata.name, { type: 'json', ops: readyOps });
  // A final migration gives its leases back after its final phase is written (so no observer
  // ever sees more running migrations than the limit) and before its finalizer goes (so a lease
  // never outlives the migration that holds it). A crash in between: the next pass releases again.
  const release = isFinal(result.phase) ? () => releaseSlots(deps.leases, holder, sourceNode) : undefined;
  await writeMigration(migration, desired, deps, release);

  // KubeVirt collects on every pass of a final migration; once, when it turns final, saves a LIST per pass.
  if (isFinal(result.phase) && result.steps.length > 0) await garbageCollect(namespace, vmiName, deps);
  if (wait) return requeueAfter(scaled(deps, wait.seconds), wait.why);
  if (holdsLease) return requeueAfter(scaled(deps, leaseTtl(deps) / 4000), 'renew migration leases');
  return done;
}

async function observe(migration: VirtualMachineInstanceMigration, vmi: VirtualMachineInstance, deps: MigrationDeps, rv: string | undefined): Promise<Observed> {
  const namespace = vmi.metadata?.namespace ?? '';
  const list = await deps.kube.list(PODS, namespace, { labelSelector: vmiPodsSelector(vmi.metadata?.uid ?? ''), resourceVersion: rv });
  const pods = list.items;
  const targets = targetPodsOf(pods, migration).sort((a, b) => Number(a.metadata?.deletionTimestamp !== undefined) - Number(b.metadata?.deletionTimestamp !== undefined));
  // The VMI's other migrations matter only for the backoff, before the target pod exists.
  const annotations = migration.metadata?.annotations ?? {};
  const phase = migration.status?.phase ?? '';
  const needMigrations = (phase === '' || phase === 'Pending') && targets.length === 0 && (EVACUATION_ANNOTATION in annotations || WORKLOAD_UPDATE_ANNOTATION in annotations);
  const vmiMigrations = needMigrations ? (await deps.kube.list(MIGRATIONS, namespace, { resourceVersion: rv })).items.filter((m) => m.spec.vmiName === migration.spec.vmiName) : [];
  // A hotplug VMI's target has an attachment pod: one more list, only while there is a target pod.
  const hotplug = vmiHasHotplugVolumes(vmi);
  const targetPod = targets[0];
  let attachmentPod: V1Pod | undefined;
  if (hotplug && targetPod && !isFinal(phase)) {
    const selector = `${APP_LABEL}=${HOTPLUG_DISK_APP},${MIGRATION_JOB_UID_LABEL}=${migration.metadata?.uid ?? ''}`;
    attachmentPod = targetAttachmentPod((await deps.kube.list(PODS, namespace, { labelSelector: selector, resourceVersion: rv })).items, targetPod);
  }
  return { migration, vmi, pods, targetPod, sourcePod: sourcePodOf(vmi, pods, migration), vmiMigrations, hotplug, attachmentPod };
}

function otherMigrationActive(o: Observed): boolean {
  const ms = o.vmi.status?.migrationState;
  return ms?.migrationUid !== undefined && ms.migrationUid !== o.migration.metadata?.uid && !ms.completed;
}

interface Acted {
  readonly observed: Observed;
  readonly wait?: { seconds: number; why: string };
  /** The backend PVCs the target pod was created with (recorded in the migration's status). */
  readonly persistentStatePvcs?: PersistentStatePvcs;
  /** The target pod was refused by a ResourceQuota (`exceeded quota`): migrationRejectedByResourceQuota. */
  readonly quotaRejected?: boolean;
}

/**
 * A blocked Pending migration (pending-blocks.ts): a system-critical one asks virt-handler, through
 * virt-api, to abort the backup (once: before its migrationBlockedByBackup condition exists); utility
 * volumes are reported each pass; either is looked at again later (a timeout fails it in nextPhase).
 */
async function actOnBlock(block: PendingBlock, o: Observed, deps: MigrationDeps): Promise<Acted> {
  const { migration, vmi } = o;
  switch (block.kind) {
    case 'backup': {
      if (block.critical && !(migration.status?.conditions ?? []).some((c) => c.type === BLOCKED_BY_BACKUP)) {
        try {
          await deps.virtApi.put('virtualmachineinstances', vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', 'backup', { backupName: block.backupName, cmd: 'Abort', ...(block.startTimestamp ? { backupStartTime: block.startTimestamp } : {}) });
        } catch (err) {
          await event(deps, migration, KIND_MIGRATION, 'Warning', 'BackupAbortFailed', `Failed to abort backup ${block.backupName} for critical migration: ${errorText(err)}`);
          throw err;
        }
        await event(deps, migration, KIND_MIGRATION, 'Normal', 'BackupAbortedForMigration', `Aborting backup ${block.backupName} for system-critical migration`);
      }
      return { observed: o, wait: { seconds: retrySecondsForPriority(migration.spec.priority), why: block.message } };
    }
    case 'utility-volumes':
      await event(deps, migration, KIND_MIGRATION, 'Warning', 'UtilityVolumeMigrationPending', block.event);
      return { observed: o, wait: { seconds: block.remainingSeconds, why: 'utility volumes attached to the VMI' } };
    case 'utility-volumes-timeout':
      return { observed: o };
  }
}

async function act(key: string, action: SyncAction, o: Observed, deps: MigrationDeps): Promise<Acted> {
  const { migration, vmi } = o;
  const namespace = vmi.metadata?.namespace ?? '';
  const vmiName = vmi.metadata?.name ?? '';
  switch (action.kind) {
    case 'none':
      return { observed: o };
    case 'wait': {
      // An unschedulable host-model target: is there any other node with its CPU model and features?
      const required = action.unschedulableTarget ? hostModelRequirements(vmi, action.unschedulableTarget) : undefined;
      if (required) {
        const warning = noSuitableHostModelNode(vmi, required, (await deps.kube.list(NODES, undefined)).items);
        if (warning) await event(deps, vmi, KIND_VMI, 'Warning', 'NoSuitableNodesForHostModelMigration', warning);
      }
      if (action.event) await event(deps, migration, KIND_MIGRATION, 'Warning', action.event.reason, action.event.message);
      return { observed: o, wait: { seconds: action.seconds, why: action.why } };
    }
    case 'create-target-pod':
      return createTargetPod(key, o, deps);
    case 'delete-target-pod': {
      const k = podKey(action.pod);
      await deps.expectations.expectDeletions(POD_EXPECTATIONS, key, [k], deps.now());
      try {
        await deps.kube.delete(PODS, namespace, action.pod.metadata?.name ?? '');
      } catch (err) {
        await deps.expectations.deletionObserved(POD_EXPECTATIONS, key, k);
        await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedDelete', `failed to delete pod ${k}`);
        throw err;
      }
      await event(deps, migration, KIND_MIGRATION, 'Normal', action.event.reason, action.event.message);
      return { observed: { ...o, targetPod: undefined, pods: o.pods.filter((p) => p !== action.pod) } };
    }
    case 'create-attachment-pod':
      return createAttachmentPod(key, action.targetPod, o, deps);
    case 'hand-off': {
      const config = await deps.clusterConfig();
      const [policies, nsLabels] = await Promise.all([deps.policySource.policies(), deps.policySource.namespaceLabels(namespace)]);
      const policy = matchPolicy(policies, vmi, nsLabels);
      const configuration = resolveMigrationConfiguration(config.migrations, policy);
      // KubeVirt's updateTargetPodNetworkInfo: the target's launcher reads its SR-IOV (and
      // device-info binding) interfaces' device info from this annotation, so it goes first.
      await syncTargetPodNetworkInfo(vmi, action.pod, config.networkBindings, deps);
      const ops = handoffPatch({ vmi, migration, targetPod: action.pod, attachmentPod: o.attachmentPod, sourcePodName: o.sourcePod?.metadata?.name, policyName: policy?.metadata?.name, configuration });
      let patched: VirtualMachineInstance;
      try {
        patched = await deps.kube.patch(VMIS, namespace, vmiName, { type: 'json', ops });
      } catch (err) {
        await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedHandOver', `Failed to hand off migration target pod: ${errorText(err)}`);
        throw err;
      }
      await event(deps, migration, KIND_MIGRATION, 'Normal', 'SuccessfulHandOver', 'Migration target pod is ready for preparation by virt-handler.');
      return { observed: { ...o, vmi: patched } };
    }
    case 'mark-target-down': {
      const patched = await deps.kube.patch(VMIS, namespace, vmiName, { type: 'json', ops: targetDownPatch(vmi, new Date(deps.now()).toISOString()) });
      await event(deps, vmi, KIND_VMI, 'Warning', 'FailedMigration', 'Migration target pod is down');
      return { observed: { ...o, vmi: patched } };
    }
    case 'request-abort': {
      try {
        const patched = await deps.kube.patch(VMIS, namespace, vmiName, { type: 'json', ops: abortPatch(vmi) });
        await event(deps, migration, KIND_MIGRATION, 'Normal', 'SuccessfulAbortMigration', `Requested abort of migration ${key}`);
        return { observed: { ...o, vmi: patched } };
      } catch (err) {
        await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedAbortMigration', `Failed to abort migration: ${errorText(err)}`);
        throw err;
      }
    }
  }
}

/**
 * The limits first (two conditional lease writes), then the expectation, then the create: of any
 * number of workers racing for the last slot, one gets it; of any number racing for this
 * migration's pod, one creates it.
 */
async function createTargetPod(key: string, observed: Observed, deps: MigrationDeps): Promise<Acted> {
  let o = observed;
  let vmi = o.vmi;
  const { migration } = o;
  const config = await deps.clusterConfig();
  const sourceNode = vmi.status?.nodeName ?? '';
  const refused = await acquireSlots(deps.leases, { holder: key, sourceNode, limits: limitsOf(config.migrations), now: deps.now(), ttlMs: leaseTtl(deps) }, () => runningInCluster(deps));
  if (refused) {
    return { observed: o, wait: { seconds: LIMIT_RECHECK_SECONDS, why: refused === 'cluster' ? 'parallelMigrationsPerCluster reached' : `parallelOutboundMigrationsPerNode reached on ${sourceNode}` } };
  }
  // The source node's labels give the host-model CPU and vendor selectors (reference §b.8). One
  // read per target pod, after the slots: a refused migration polls often and must not pay it.
  // A node that is gone has no labels to copy; the target pod is rendered without them.
  // The config is read anew too: just after an upgrade a cached one (up to 5 s old) still names
  // the old launcher image, and the workload updater's migration would land the VMI on the
  // launcher it is leaving (seen in the drain/upgrade chaos run: Succeeded, still outdated).
  // The claims the target pod mounts, for their volume modes (a Block claim is a volumeDevice):
  // the template service reads them from KubeVirt's PVC informer.
  const claims = new Map<string, V1PersistentVolumeClaim>();
  const [sourceNodeLabels, current] = await Promise.all([
    sourceNode ? deps.kube.get(NODES, undefined, sourceNode).then((n) => n?.metadata?.labels ?? {}) : Promise.resolve({}),
    deps.clusterConfig({ fresh: true }),
    ...launcherClaimNames(vmi).map(async (c) => {
      const pvc = await deps.kube.get(PVCS, vmi.metadata?.namespace ?? '', c);
      if (pvc) claims.set(c, pvc);
    }),
  ]);
  // Cannot create now (no backend PVC to start from, no SELinux context yet…): give the slot
  // back and say so on the VMI.
  const cannot = async (why: string): Promise<Acted> => {
    await releaseSlots(deps.leases, key, sourceNode);
    await event(deps, vmi, KIND_VMI, 'Warning', 'FailedCreate', `Error creating pod: ${why}`);
    return { observed: o, wait: { seconds: retrySecondsForPriority(migration.spec.priority), why: `target pod cannot be rendered: ${why}` } };
  };
  // KubeVirt's setupVMIRuntimeUser: the VMI takes the runtime user launchers run as now (root ↔
  // non-root), and the target pod is rendered for it.
  const userOps = runtimeUserPatch(vmi, gateEnabled(current, 'Root'));
  if (userOps.length > 0) {
    try {
      vmi = await deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops: userOps });
    } catch (err) {
      await releaseSlots(deps.leases, key, sourceNode);
      throw new TransientError('FailedPatch', `failed to set VMI RuntimeUser: ${errorText(err)}`, { cause: err });
    }
    o = { ...o, vmi };
  }
  // The template service renders the target as it renders any launcher pod: a hook sidecar's
  // missing ConfigMap refuses the render; the namespace's quotas (and, when they matter, its
  // labels) decide automatic CPU and memory limits, as they did for the source pod.
  const missing = await missingSidecarConfigMap(deps.kube, vmi, current);
  if (missing) return cannot(`failed to render launch manifest: ${missing}`);
  const networks = await networkResources(deps.kube, vmi, current);
  if ('missing' in networks) return cannot(`failed to render launch manifest: ${networks.missing}`);
  const namespace = await namespaceLimits(deps.kube, vmi, current);
  const backend = await prepareTargetBackend(vmi, migration, current, deps);
  if (backend.kind === 'error') return cannot(backend.message);
  const persistentStatePvcs = backend.kind === 'ready' ? backend.pvcs : undefined;
  let pod: V1Pod;
  try {
    pod = renderMigrationTargetPod(vmi, migration, o.sourcePod as V1Pod, current, sourceNodeLabels, { backendPvc: persistentStatePvcs?.target, pvcs: renderClaimInfo(claims), namespace, networkResources: networks.resources });
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    return cannot(err.message);
  }
  if (!(await deps.expectations.tryExpectCreations(POD_EXPECTATIONS, key, 1, deps.now()))) {
    return { observed: o, wait: { seconds: 1, why: 'another worker is creating the target pod' }, ...(persistentStatePvcs && { persistentStatePvcs }) };
  }
  let created: V1Pod;
  try {
    created = await deps.kube.create(PODS, pod);
  } catch (err) {
    await deps.expectations.creationObserved(POD_EXPECTATIONS, key);
    await event(deps, vmi, KIND_VMI, 'Warning', 'FailedCreate', `Error creating pod: ${errorText(err)}`);
    // A ResourceQuota's refusal is recorded on the migration (migrationRejectedByResourceQuota) and looked
    // at again when a quota of the namespace changes (the relay's wake) or after the retry delay.
    if (errorText(err).includes('exceeded quota')) {
      await releaseSlots(deps.leases, key, sourceNode);
      return { observed: o, quotaRejected: true, wait: { seconds: retrySecondsForPriority(migration.spec.priority), why: 'target pod rejected by a ResourceQuota' } };
    }
    throw err;
  }
  await event(deps, migration, KIND_MIGRATION, 'Normal', 'SuccessfulCreate', `Created migration target pod ${created.metadata?.namespace ?? ''}/${created.metadata?.name ?? ''}`);
  return { observed: { ...o, targetPod: created, pods: [...o.pods, created] }, ...(persistentStatePvcs && { persistentStatePvcs }) };
}

/**
 * The target's attachment pod (a VMI with hotplugged volumes), once the target pod is ready: the
 * hotplug claims read (one GET each), the pod rendered against the target pod, the expectation
 * recorded, then the create. A claim that is missing or a template error is retried (KubeVirt's
 * sync error), a creation by another worker not yet visible is waited for.
 */
async function createAttachmentPod(key: string, targetPod: V1Pod, o: Observed, deps: MigrationDeps): Promise<Acted> {
  const { migration, vmi } = o;
  const namespace = vmi.metadata?.namespace ?? '';
  const sourcePod = o.sourcePod ?? targetPod;
  const pvcs = new Map<string, V1PersistentVolumeClaim>();
  await Promise.all(targetAttachmentClaims(vmi, sourcePod).map(async (name) => {
    const pvc = await deps.kube.get(PVCS, namespace, name);
    if (pvc) pvcs.set(name, pvc);
  }));
  const config = await deps.clusterConfig();
  let rendered: ReturnType<typeof renderTargetAttachmentPod>;
  try {
    rendered = renderTargetAttachmentPod(vmi, migration, sourcePod, targetPod, pvcs, config);
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    rendered = { kind: 'error', message: `failed to render attachment pod template: ${err.message}` };
  }
  if (rendered.kind === 'error') {
    deps.log.warn('cannot create the target attachment pod', { key, error: rendered.message });
    return { observed: o, wait: { seconds: 1, why: rendered.message } };
  }
  const gate = await tryExpectAttachmentPod(key, deps);
  if (gate.kind === 'wait') return { observed: o, wait: { seconds: gate.seconds, why: 'another worker is creating the target attachment pod' } };
  let created: V1Pod;
  try {
    created = await deps.kube.create(PODS, rendered.pod);
  } catch (err) {
    await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
    await event(deps, vmi, KIND_VMI, 'Warning', 'FailedCreate', `Error creating attachment pod: ${errorText(err)}`);
    throw err;
  }
  await event(deps, migration, KIND_MIGRATION, 'Normal', 'SuccessfulCreate', `Created attachment pod ${created.metadata?.name ?? ''}`);
  return { observed: { ...o, attachmentPod: created } };
}

/**
 * What the API server shows running (the fence of limits.ts): every migration and every target
 * pod, cluster-wide, read fresh (no resourceVersion: a quorum read). Two lists per target pod
 * about to be created; KubeVirt counts the same from its informer cache.
 */
async function runningInCluster(deps: MigrationDeps): Promise<readonly RunningMigration[]> {
  const [migrations, targetPods] = await Promise.all([deps.kube.list(MIGRATIONS, undefined), deps.kube.list(PODS, undefined, { labelSelector: MIGRATION_JOB_UID_LABEL })]);
  const withTargetPod = new Set(targetPods.items.map((p) => p.metadata?.labels?.[MIGRATION_JOB_UID_LABEL] ?? ''));
  return runningMigrations(migrations.items, withTargetPod);
}

/** KubeVirt deletes a migration whose VMI is gone; we first record it Failed and give back its leases. */
async function vmiGone(key: string, migration: VirtualMachineInstanceMigration, deps: MigrationDeps): Promise<Outcome> {
  const result = nextPhase({ migration, vmi: undefined, targetPod: undefined, otherMigrationActive: false });
  await deps.expectations.delete(POD_EXPECTATIONS, key);
  await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, key);
  await dropUnhandedTarget(migration, deps);
  if (result.steps.length > 0) await event(deps, migration, KIND_MIGRATION, 'Warning', 'FailedMigration', result.failure ?? 'Migration failed');
  const desired = computeMigration({ migration, vmi: undefined, result, sourcePod: undefined, now: new Date(deps.now()).toISOString() });
  await writeMigration(migration, desired, deps, () => releaseSlots(deps.leases, key, migration.status?.migrationState?.sourceNode));
  if (!migration.metadata?.deletionTimestamp) await deps.kube.delete(MIGRATIONS, migration.metadata?.namespace ?? '', migration.metadata?.name ?? '');
  return done;
}

/** Status first (subresource), then `between`, then labels/annotations/finalizers on the object it returned. */
async function writeMigration(before: VirtualMachineInstanceMigration, after: VirtualMachineInstanceMigration, deps: MigrationDeps, between?: () => Promise<void>): Promise<void> {
  const plan = planWrites(before, after);
  let current = before;
  if (plan.status) current = await deps.kube.update(MIGRATIONS, { ...before, status: after.status ?? {} }, { subresource: 'status' });
  await between?.();
  if (plan.metadata) {
    const meta = { ...current.metadata, labels: after.metadata?.labels ?? {}, annotations: after.metadata?.annotations ?? {}, finalizers: after.metadata?.finalizers ?? [] };
    await deps.kube.update(MIGRATIONS, { ...current, metadata: meta });
  }
}

/** Keeps the newest finished migrations of the VMI; deletes the rest with the pods they left behind. */
async function garbageCollect(namespace: string, vmiName: string, deps: MigrationDeps): Promise<void> {
  const all = (await deps.kube.list(MIGRATIONS, namespace)).items.filter((m) => m.spec.vmiName === vmiName);
  for (const { migration, pod } of collectGarbage(all)) {
    await deps.kube.delete(MIGRATIONS, namespace, migration.metadata?.name ?? '');
    if (pod) await deps.kube.delete(PODS, namespace, pod);
  }
}

function leaseTtl(deps: MigrationDeps): number {
  return deps.leaseTtlMs ?? EXPECTATIONS_TIMEOUT_MS;
}

/** Seconds on the reconcile's clock → seconds on the queue's wall clock. */
function scaled(deps: MigrationDeps, seconds: number): number {
  return Math.max(0.05, seconds / (deps.clockSpeed ?? 1));
}


/** Events about the migration or its VMI (best effort, shared/reconcile/events.ts). */
function event(deps: MigrationDeps, obj: VirtualMachineInstance | VirtualMachineInstanceMigration, kind: string, type: 'Normal' | 'Warning', reason: string, text: string): Promise<void> {
  return recordEvent(deps, kubevirtRef(obj, kind), type, reason, text, EVENT_COMPONENT.migration);
}
