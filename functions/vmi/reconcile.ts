/**
 * KubeVirt's VMI controller as one stateless reconcile (reference.md §a):
 * observe → expectations gate → sync (decide, then act: one kind of mutation) → status.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance } from '../../shared/api/index.ts';
import { CREATED_BY_LABEL, KIND_VM, KIND_VMI, KUBEVIRT_API_VERSION, VM_CONTROLLER_FINALIZER, vmiPodsSelector } from '../../shared/api/well-known.ts';
import { errorText, InvalidInputError, TransientError } from '../../shared/errors.ts';
import type { ListResult } from '../../shared/kube/client.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext, waitAfter } from '../../shared/reconcile/outcome.ts';
import type { ExpectationSeen } from '../../shared/state/port.ts';
import { expectationsGate, lowerFromPods, type GateResult } from '../../shared/reconcile/expectations-gate.ts';
import { renderLauncherPod } from '../../shared/template/render-launcher-pod.ts';
import { renderTempPod } from '../../shared/template/render-temp-pod.ts';
import { createValidationMessage, discontinuedBindingCauses } from '../../shared/network/discontinued.ts';
import { PvcNotFoundError } from '../../shared/template/errors.ts';
import { POD_EXPECTATIONS, type VmiDeps } from './deps.ts';
import { earlyPodList } from './early-pod-list.ts';
import { ensureBackendStorage, listBackendPvcs } from './backend-pvc.ts';
import { missingSidecarConfigMap, namespaceLimits, networkResources } from '../../shared/template/read-cluster-facts.ts';
import { backendPvcFor, backendStorageNeeded } from '../../shared/storage/backend-storage.ts';
import { currentVmiPod, isControlledBy, isPodReady, isTempPod, podKey } from '../../shared/predicates/pods.ts';
import { activePodAnnotations, evictionInProgressOps, podAnnotationOps } from '../../shared/network/pod-annotations.ts';
import { podSyncOps } from './pod-sync.ts';
import { dataVolumeNamesOf } from './data-volumes-ready.ts';
import { migrationRequiredRequeueSeconds } from './migration-required.ts';
import { decideSync, guaranteeProblem, isFinal, isUnprocessed, type Observed, type SyncError } from './sync.ts';
import { needsHotplugRead, observeHotplug, syncHotplug } from './hotplug/step.ts';
import { volumeStatusEvents } from './hotplug/volume-status.ts';
import { computeVmi } from './update-status.ts';
import { unpausedConditionPatch } from './unpaused-gate.ts';
import { claimNames, volumesReady } from './volumes-ready.ts';
import { launcherClaimNames, renderClaimInfo, statusClaimNames } from '../../shared/storage/launcher-claims.ts';
import { planVmiWrite } from './write-status.ts';
import { allocateCid, takenCids } from './vsock-cid.ts';
import { FAILED_TOPOLOGY_HINTS_REASON, lowestTscFrequency, needsVmiNodes, tscHint, tscRequirement } from '../../shared/topology/hints.ts';
import { DATA_VOLUMES, MIGRATIONS, NODES, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { eventRecorder } from '../../shared/reconcile/events.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';

/** Reconciles the VMI named by `key` (`namespace/name`). */
export async function reconcileVmi(key: string, deps: VmiDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;

  // observe. The pods are listed by the VMI's UID: when the event that woke us was the VMI's own,
  // its UID is known up front and both reads go out together (one round trip less before the
  // launcher pod of a new VMI); the early list is used only if it is of this VMI and no older
  // than the VMI read (earlyPodList), else the pods are listed after the VMI as usual.
  const hintedUid = ctx.cause?.kind === KIND_VMI ? ctx.cause.uid : undefined;
  const [read, early] = await Promise.all([
    deps.kube.get(VMIS, namespace, name, { resourceVersion: rv }),
    hintedUid ? listVmiPods(deps, namespace, hintedUid, rv).catch(() => undefined) : undefined,
  ]);
  // Gone: nothing left to wait for. Its pods go by garbage collection (owner reference), its
  // pod expectations (keyed by its UID) expire with the table's TTL.
  if (!read) return done;
  let vmi = read;
  let observed = await observe(vmi, deps, rv, early && earlyPodList(early, hintedUid, vmi));
  // A Scheduled or Running VMI without its pod goes Failed (update-status.ts) — a conclusion from an
  // absence, which reads "not older than" the cause cannot prove: the message's view or the API
  // server's watch cache may hold the VMI and its pods at different moments. Newer pods than VMI:
  // the VMI still on the source node, the source pod already gone after its migration. Newer VMI
  // than pods: the VMI on the target node, the target pod not yet seen. The real lane's drain chaos
  // (seed 12) failed VMIs that had just migrated both ways. So the VMI and its pods are read again,
  // consistently, before the VMI is failed for it; every patch of a handed-off VMI also tests the
  // node it was read on (write-status.ts), for a VMI that moves between the reads and the write.
  if (rv !== undefined && podAbsent(observed)) {
    const fresh = await deps.kube.get(VMIS, namespace, name);
    if (!fresh) return done;
    vmi = fresh;
    observed = await observe(vmi, deps, undefined);
    // How often a lagging read would have failed a VMI, and which way it lagged: read from the log.
    if (!podAbsent(observed)) deps.log.info('VMI pod absence not confirmed by consistent reads', { key, nodeRead: read.status?.nodeName, node: vmi.status?.nodeName, phase: vmi.status?.phase });
  }
  // A VMI that needs a TSC frequency gets its topology hint before its launcher pod (shared/topology/hints.ts).
  const hints = await topologyHints(observed, deps);
  if (hints.vmi) observed = { ...observed, vmi: hints.vmi };

  // sync: decide, then gate the pod writes on the expectations, then act. A pass that creates
  // or deletes no pod needs no expectations (KubeVirt's `needsSync` gates the pod writes only;
  // the status is written either way), so most passes read no record: a status pass costs no
  // table read, and a creation seen by a status pass is lowered by the next pass that writes pods.
  // The record is this VMI's, by UID: one left unlowered by a VMI of the same name that went
  // (a VM's restart deletes and re-creates it) never holds up the next one.
  const podsKey = podExpectationsKey(key, vmi);
  let decision = decideSync(observed);
  let seen: ExpectationSeen = null;
  if (decision.kind !== 'none') {
    const gate = await podGate(podsKey, observed, deps);
    if (gate.kind === 'wait') return waitAfter(gate.seconds, 'pod expectations not yet satisfied');
    seen = gate.decidedUnder;
    if (gate.fresh) {
      observed = gate.observed;
      decision = decideSync(observed);
    }
  }
  let syncError: SyncError | undefined = decision.kind === 'none' ? decision.error : undefined;
  if (hints.error) {
    await event(deps, vmi, 'Warning', FAILED_TOPOLOGY_HINTS_REASON, hints.error);
    syncError ??= { reason: FAILED_TOPOLOGY_HINTS_REASON, message: hints.error, requeue: true };
  }
  if (decision.kind === 'create-pod') {
    const backend = await ensureBackendStorage(key, observed, deps, rv);
    if (backend.kind === 'wait') return waitAfter(backend.seconds, 'backend-storage PVC expectation not yet satisfied');
    if (backend.kind === 'error') syncError = backend.error;
    else {
      if (backend.pvc) observed = { ...observed, backendPvc: backend.pvc };
      const created = await createLauncherPod(podsKey, observed, decision.wffc, seen, deps);
      if (created.kind === 'created') observed = withPod(observed, created.pod);
      else syncError = created.error;
    }
  } else if (decision.kind === 'delete-pods') {
    syncError = await deletePods(podsKey, observed.vmi, decision.pods, deps);
  } else if (decision.kind === 'delete-temp-pods') {
    syncError = await deleteTempPods(podsKey, observed.vmi, decision.pods, deps);
  }
  if (syncError?.reason === 'FailedPvcNotFound') {
    await event(deps, vmi, 'Normal', 'FailedPvcNotFound', syncError.message);
  }

  // the running launcher pod's annotations: the Multus networks for a NIC hot-plug/unplug, network-info, eviction-in-progress (pod-annotations.ts)
  if (decision.kind === 'none' && !isFinal(observed.vmi) && !observed.vmi.metadata?.deletionTimestamp && observed.pod && !isTempPod(observed.pod) && isPodReady(observed.pod)) {
    const r = await syncPodAnnotations(observed.vmi, observed.pod, deps);
    if (r.pod) observed = withPod({ ...observed, pods: observed.pods.filter((p) => p.metadata?.uid !== r.pod!.metadata?.uid) }, r.pod);
    syncError ??= r.error;
  }

  // hotplug: the attachment pods of the launcher pod (hotplug/step.ts)
  let requeueSeconds: number | undefined;
  if (observed.hotplug && observed.pod && (decision.kind === 'none' || isFinal(observed.vmi))) {
    const r = await syncHotplug(key, observed.vmi, observed.pod, observed.pods, observed.hotplug, deps, (type, reason, message) => event(deps, vmi, type, reason, message));
    observed = { ...observed, hotplug: { ...observed.hotplug, attachmentPods: r.attachmentPods } };
    syncError ??= r.error;
    requeueSeconds = r.requeueSeconds;
  }

  // Dedicated CPUs need a Guaranteed pod: a ready pod that is not one is not handed off.
  const guarantee = guaranteeProblem(observed);
  if (guarantee && !syncError) {
    await event(deps, vmi, 'Warning', guarantee.reason, guarantee.message);
    syncError = guarantee;
  }

  // status, from what was observed (and what this pass created)
  const ownerVmLive = await isOwnerVmLive(observed, deps);
  const now = new Date(deps.now()).toISOString();
  const config = await deps.clusterConfig();
  const desired = computeVmi({
    observed,
    syncError,
    now,
    launcherImage: config.launcherImage,
    ownerVmLive,
    memoryOverheadRatio: config.additionalGuestMemoryOverheadRatio,
  });
  // The hand-off of an autoattachVSOCK VMI carries its VSOCK CID (vsock-cid.ts).
  if (desired.status?.phase === 'Scheduled' && vmi.status?.phase !== 'Scheduled' && vmi.spec.domain.devices.autoattachVSOCK === true && desired.status.VSOCKCID === undefined) {
    const uid = vmi.metadata?.uid ?? '';
    const all = await deps.kube.list(VMIS, undefined);
    desired.status.VSOCKCID = await allocateCid(uid, `${key}/${uid}`, takenCids(all.items, uid), deps.leases, deps.now());
  }
  if (desired.status?.phase === 'Failed' && podAbsent(observed)) {
    // Worth a line where a person looks: a running guest's VMI failed because its pod is not there.
    deps.log.warn('VMI failed: no pod of it on its node', { key, node: observed.vmi.status?.nodeName, pods: observed.pods.map((p) => `${p.metadata?.name}@${p.spec?.nodeName ?? '-'}/${p.status?.phase ?? '-'}`).join(' '), confirmedBy: rv === undefined ? 'consistent reads' : 'consistent reads again' });
  }
  const write = planVmiWrite(vmi, desired);
  if (write.kind === 'update') await deps.kube.update(VMIS, write.vmi);
  else if (write.kind === 'patch') await deps.kube.patch(VMIS, namespace, name, { type: 'json', ops: write.ops });
  // The VMI's node, outdated-launcher and descheduler labels and annotations follow onto its pod (pod-sync.ts).
  if (observed.pod && !isTempPod(observed.pod)) await syncPodMetadata(desired, observed.pod, config, deps);
  for (const e of volumeStatusEvents(vmi.status?.volumeStatus, desired.status?.volumeStatus)) await event(deps, vmi, 'Normal', e.reason, e.message);
  await syncUnpausedGate(observed, now, deps);

  // A requeue-type sync error is retried with backoff like any transient error.
  if (syncError?.requeue) throw new TransientError(syncError.reason, syncError.message);
  if (requeueSeconds !== undefined) return requeueAfter(requeueSeconds, 'attachment pod expectation not yet satisfied');
  // A pending network migration is looked at again even if nothing else changes (KubeVirt's AddAfter).
  const pending = migrationRequiredRequeueSeconds(desired);
  return pending !== undefined ? requeueAfter(pending, 'MigrationRequired pending') : done;
}

/** One JSON patch of the pod's synced labels and annotations; a pod gone meanwhile is ignored, another failure retried. */
async function syncPodMetadata(vmi: VirtualMachineInstance, pod: V1Pod, config: ClusterConfig, deps: VmiDeps): Promise<void> {
  const ops = podSyncOps(vmi, pod, config);
  if (ops.length === 0) return;
  try {
    await deps.kube.patch(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    if (err instanceof NotFoundError) return;
    throw new TransientError('FailedPodPatch', `error syncing annotations and labels to pod: ${errorText(err)}`);
  }
}

/**
 * The ready launcher pod's annotations (pod-annotations.ts): one JSON patch of the keys that
 * differ. A failure is KubeVirt's `FailedPodPatch` sync error; a pod deleted meanwhile is ignored.
 */
async function syncPodAnnotations(vmi: VirtualMachineInstance, pod: V1Pod, deps: VmiDeps): Promise<{ pod?: V1Pod; error?: SyncError }> {
  // The binding plugins matter only to an interface that names one: no config read otherwise.
  const bindings = (vmi.spec.domain.devices.interfaces ?? []).some((i) => i.binding !== undefined) ? (await deps.clusterConfig()).networkBindings : {};
  const changes = activePodAnnotations(vmi, pod, bindings);
  const annotationOps = Object.keys(changes).length === 0 ? [] : podAnnotationOps(pod, changes);
  // KubeVirt writes the eviction mark in a second patch; one JSON patch holds both here.
  const ops = [...annotationOps, ...evictionInProgressOps(vmi, pod, pod.metadata?.annotations !== undefined || annotationOps.length > 0)];
  if (ops.length === 0) return {};
  try {
    return { pod: await deps.kube.patch(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', { type: 'json', ops }) };
  } catch (err) {
    if (err instanceof NotFoundError) return {};
    return { error: { reason: 'FailedPodPatch', message: errorText(err), requeue: true } };
  }
}

/** A Scheduled or Running VMI whose current pod is missing (or only a temporary pod): what fails it. */
function podAbsent(o: Observed): boolean {
  const phase = o.vmi.status?.phase;
  return (phase === 'Scheduled' || phase === 'Running') && (o.pod === undefined || isTempPod(o.pod));
}

/** The pods labelled as created by the VMI with this UID (launcher, migration target, temporary). */
function listVmiPods(deps: VmiDeps, namespace: string, uid: string, rv: string | undefined): Promise<ListResult<V1Pod>> {
  return deps.kube.list(PODS, namespace, { labelSelector: vmiPodsSelector(uid), resourceVersion: rv });
}

async function observe(vmi: VirtualMachineInstance, deps: VmiDeps, rv: string | undefined, podsRead?: ListResult<V1Pod>): Promise<Observed> {
  const namespace = vmi.metadata?.namespace ?? '';
  const uid = vmi.metadata?.uid ?? '';
  const podList = podsRead ?? (await listVmiPods(deps, namespace, uid, rv));
  const pods = podList.items.filter((p) => isControlledBy(p, vmi));

  // Only what the spec references, and only while it can still matter: before the launcher pod
  // (readiness, and the volume modes the pod is rendered with), and from the hand-off on, for
  // `status.volumeStatus` (claims.ts).
  const pvcs = new Map<string, V1PersistentVolumeClaim>();
  const dataVolumes = new Map<string, DataVolume>();
  const phase = vmi.status?.phase ?? '';
  const pod = currentVmiPod(vmi, pods);
  const handingOff = phase === 'Scheduling' && pod !== undefined && !isTempPod(pod) && isPodReady(pod);
  const claimsToRead =
    phase === '' || phase === 'Pending'
      ? [...new Set([...claimNames(vmi).pvcs, ...claimNames(vmi).dataVolumes, ...launcherClaimNames(vmi)])]
      : handingOff || phase === 'Scheduled' || phase === 'Running'
        ? statusClaimNames(vmi)
        : [];
  await Promise.all([
    ...claimsToRead.map(async (c) => {
      const pvc = await deps.kube.get(PVCS, namespace, c, { resourceVersion: rv });
      if (pvc) pvcs.set(c, pvc);
    }),
    // Every pass: the VMI's DataVolumesReady condition follows them (data-volumes-ready.ts).
    ...dataVolumeNamesOf(vmi, new Map()).map(async (d) => {
      const dv = await deps.kube.get(DATA_VOLUMES, namespace, d, { resourceVersion: rv });
      if (dv) dataVolumes.set(d, dv);
    }),
  ]);
  // A claim volume whose claim a DataVolume controls: its DataVolume too, once the claim was read.
  await Promise.all(
    dataVolumeNamesOf(vmi, pvcs).filter((d) => !dataVolumes.has(d)).map(async (d) => {
      const dv = await deps.kube.get(DATA_VOLUMES, namespace, d, { resourceVersion: rv });
      if (dv) dataVolumes.set(d, dv);
    }),
  );
  const backendPvc = backendStorageNeeded(vmi)
    ? backendPvcFor(vmi.metadata?.name ?? '', await listBackendPvcs(deps, namespace, vmi.metadata?.name ?? '', rv))
    : undefined;
  // The VMI's migrations matter only to a pod creation (sync.ts step 6: none while one of them
  // runs), so they are read only where one can happen — not on every pass of every VMI that ever
  // migrated (a drain's VMIs each listed the namespace's migrations a dozen times).
  const migrations =
    vmi.status?.migrationState && pod === undefined && (phase === '' || phase === 'Pending')
      ? (await deps.kube.list(MIGRATIONS, namespace, { resourceVersion: rv })).items.filter((m) => m.spec.vmiName === vmi.metadata?.name)
      : [];
  // Past Pending the claims are not read (they matter only before the launcher pod exists, and a
  // claim in use cannot go away): they count as ready, never as missing.
  const volumes = phase === '' || phase === 'Pending' ? volumesReady(vmi, pvcs, dataVolumes) : { ready: true, wffc: false };
  const hotplug = needsHotplugRead(vmi, pod) ? await observeHotplug(vmi, pod, pods, deps, rv, pvcs) : undefined;
  return { vmi, pods, pod, volumes, migrations, claims: pvcs, dataVolumes: [...dataVolumes.values()], ...(backendPvc ? { backendPvc } : {}), ...(hotplug ? { hotplug } : {}) };
}

/** The key of a VMI's pod expectations: its key and its UID (`ns/name/uid`). */
export function podExpectationsKey(key: string, vmi: VirtualMachineInstance): string {
  return `${key}/${vmi.metadata?.uid ?? ''}`;
}

/**
 * The pod gate (shared/reconcile/expectations-gate.ts). KubeVirt lowers expectations from informer
 * events; a stateless function lowers them from what its reads show. Creation is observed once a
 * controlled pod is listed; a deletion once the pod is gone or terminating. We never lower an
 * expectation for our own write without seeing it: a worker with a stale read would otherwise
 * create a second launcher pod. A satisfied record is kept until its TTL (a pod of this VMI was
 * created or deleted, and some pass has seen it); this pass's read may predate that, so it
 * re-reads with a quorum read before it acts.
 */
function podGate(key: string, observed: Observed, deps: VmiDeps): Promise<GateResult<Observed>> {
  return expectationsGate(
    {
      key,
      scopes: [POD_EXPECTATIONS],
      what: 'pod',
      rereadWhenSatisfied: true,
      reobserve: () => observe(observed.vmi, deps, undefined),
      lower: (o, [record]) => lowerFromPods(deps, POD_EXPECTATIONS, key, record, o.pods),
    },
    observed,
    deps,
  );
}

type CreateResult = { kind: 'created'; pod: V1Pod } | { kind: 'failed'; error: SyncError };

async function createLauncherPod(key: string, o: Observed, wffc: boolean, seen: ExpectationSeen, deps: VmiDeps): Promise<CreateResult> {
  const { vmi } = o;
  let pod: V1Pod;
  try {
    // A volume waiting for its first consumer gets the temporary pod first (reference-vm-vmi-depth §4).
    // The claims as read (KubeVirt's PVC cache): a Block claim becomes a device, an RWX one a
    // shared path; a claim that is not there fails with FailedPvcNotFound.
    // The namespace's quotas and labels decide automatic CPU and memory limits.
    const backendPvc = o.backendPvc?.metadata?.name;
    const pvcs = renderClaimInfo(o.claims ?? new Map());
    const config = await deps.clusterConfig();
    const missing = await missingSidecarConfigMap(deps.kube, vmi, config);
    // Retried with backoff, as KubeVirt retries a render that failed on a read.
    if (missing) return { kind: 'failed', error: { reason: 'FailedCreate', message: `failed to render launch manifest: ${missing}`, requeue: true } };
    // ExternalNetResourceInjection off: each Multus network's NetworkAttachmentDefinition names the
    // device-plugin resource the pod requests; one not there refuses the render, retried (a NAD made later is read then).
    const networks = await networkResources(deps.kube, vmi, config);
    if ('missing' in networks) return { kind: 'failed', error: { reason: 'FailedCreate', message: `failed to render launch manifest: ${networks.missing}`, requeue: true } };
    const namespace = await namespaceLimits(deps.kube, vmi, config);
    pod = (wffc ? renderTempPod : renderLauncherPod)(vmi, config, { namespace, pvcs, ...(backendPvc ? { backendPvc } : {}), networkResources: networks.resources });
  } catch (err) {
    if (err instanceof PvcNotFoundError) return { kind: 'failed', error: { reason: 'FailedPvcNotFound', message: err.message, requeue: false } };
    if (!(err instanceof InvalidInputError)) throw err;
    // An invalid VMI never renders: report it on the VMI and wait for the user to change it.
    const message = `failed to render launch manifest: ${err.message}`;
    await event(deps, vmi, 'Warning', 'FailedCreate', message);
    return { kind: 'failed', error: { reason: 'FailedCreate', message, requeue: false } };
  }
  // The one network rule the controller checks itself (the rest is virt-api's): no pod, no event.
  const causes = discontinuedBindingCauses(vmi.spec);
  if (causes.length > 0) return { kind: 'failed', error: { reason: 'FailedCreateValidation', message: createValidationMessage(causes), requeue: false } };
  // Record the expectation before the write, conditionally: of N racing workers one wins, and
  // only under the record this pass decided under — one set (and maybe already seen) since means
  // another worker created a pod this pass's read may not show.
  if (!(await deps.expectations.tryExpectCreations(POD_EXPECTATIONS, key, 1, deps.now(), seen))) {
    return { kind: 'failed', error: { reason: 'FailedCreate', message: 'another worker is creating the launcher pod', requeue: true } };
  }
  try {
    const created = await deps.kube.create(PODS, pod);
    await event(deps, vmi, 'Normal', 'SuccessfulCreate', `Created virtual machine pod ${created.metadata?.name ?? ''}`);
    return { kind: 'created', pod: created };
  } catch (err) {
    await deps.expectations.creationObserved(POD_EXPECTATIONS, key);
    const message = errorText(err);
    const privileged = /violates PodSecurity/.test(message);
    await event(deps, vmi, 'Warning', 'FailedCreate', privileged ? `failed to create pod: it needs a privileged namespace to run: ${message}` : `Error creating pod: ${message}`);
    return { kind: 'failed', error: { reason: 'FailedCreate', message, requeue: true } };
  }
}

async function deletePods(key: string, vmi: VirtualMachineInstance, pods: readonly V1Pod[], deps: VmiDeps): Promise<SyncError | undefined> {
  for (const pod of pods) {
    const k = podKey(pod);
    await deps.expectations.expectDeletions(POD_EXPECTATIONS, key, [k], deps.now());
    try {
      await deps.kube.delete(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
      await event(deps, vmi, 'Normal', 'SuccessfulDelete', `Deleted virtual machine pod ${pod.metadata?.name ?? ''}`);
    } catch (err) {
      await deps.expectations.deletionObserved(POD_EXPECTATIONS, key, k);
      await event(deps, vmi, 'Warning', 'FailedDelete', `Failed to delete virtual machine pod ${pod.metadata?.name ?? ''}`);
      return { reason: 'FailedDelete', message: errorText(err), requeue: true };
    }
  }
  return undefined;
}

/**
 * Deletes WFFC temporary pods with grace 0 (they only ran `echo`), recording the deletions as
 * expectations like any pod deletion. A failure is KubeVirt's `FailedHotplugSync` sync error.
 */
async function deleteTempPods(key: string, vmi: VirtualMachineInstance, pods: readonly V1Pod[], deps: VmiDeps): Promise<SyncError | undefined> {
  for (const pod of pods) {
    const k = podKey(pod);
    const name = pod.metadata?.name ?? '';
    await deps.expectations.expectDeletions(POD_EXPECTATIONS, key, [k], deps.now());
    try {
      await deps.kube.delete(PODS, pod.metadata?.namespace ?? '', name, { gracePeriodSeconds: 0 });
      await event(deps, vmi, 'Normal', 'SuccessfulDelete', `Deleted WaitForFirstConsumer temporary pod ${name}`);
    } catch (err) {
      await deps.expectations.deletionObserved(POD_EXPECTATIONS, key, k);
      await event(deps, vmi, 'Warning', 'FailedDelete', `Failed to delete WaitForFirstConsumer temporary pod ${name}`);
      return { reason: 'FailedHotplugSync', message: errorText(err), requeue: true };
    }
  }
  return undefined;
}

/**
 * The launcher pod's readiness-gate condition (unpaused-gate.ts): a status write to the pod, only
 * when it differs. After the VMI write, so that a failure here never holds back the VMI's status.
 */
async function syncUnpausedGate(o: Observed, now: string, deps: VmiDeps): Promise<void> {
  const pod = o.pod;
  const patch = unpausedConditionPatch(o.vmi, pod, now);
  if (!pod || !patch) return;
  try {
    await deps.kube.patch(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', patch, { subresource: 'status' });
  } catch (err) {
    // Deleted since we listed it: its readiness no longer matters (the next pass sees it gone).
    if (!(err instanceof NotFoundError)) throw err;
  }
}

function withPod(o: Observed, pod: V1Pod): Observed {
  const pods = [...o.pods, pod];
  return { ...o, pods, pod: currentVmiPod(o.vmi, pods) };
}

/** Only asked when it matters: a final VMI without pods that still carries the VM's finalizer. */
async function isOwnerVmLive(o: Observed, deps: VmiDeps): Promise<boolean> {
  const { vmi } = o;
  const phase = vmi.status?.phase;
  if ((phase !== 'Succeeded' && phase !== 'Failed') || o.pods.length > 0) return true;
  if (!vmi.metadata?.finalizers?.includes(VM_CONTROLLER_FINALIZER)) return true;
  const ref = vmi.metadata.ownerReferences?.find((r) => r.controller && r.kind === KIND_VM);
  if (!ref) return false;
  const vm = await deps.kube.get(VMS, vmi.metadata.namespace ?? '', ref.name);
  return vm !== undefined && vm.metadata?.uid === ref.uid && vm.metadata.deletionTimestamp === undefined;
}

/** Events about the VMI (best effort, shared/reconcile/events.ts). */
const event = eventRecorder(KUBEVIRT_API_VERSION, KIND_VMI, EVENT_COMPONENT.vmi);

/**
 * KubeVirt's `addTopologyHints`, for a VMI still unprocessed and without a pod that needs a TSC
 * frequency and has no hint yet: the nodes listed (and the VMIs, only when a node reporting a
 * frequency is unschedulable), the hint put into the observed VMI (written with this pass's status,
 * read by this pass's pod render). A configured minimum that is not > 0 is an error for a VMI that
 * needs the frequency to boot; for one that needs it to migrate there is no hint, and no pod.
 */
async function topologyHints(o: Observed, deps: VmiDeps): Promise<{ vmi?: VirtualMachineInstance; error?: string }> {
  const vmi = o.vmi;
  const requirement = tscRequirement(vmi);
  if (!requirement || vmi.status?.topologyHints !== undefined || o.pod !== undefined || !isUnprocessed(vmi)) return {};
  const config = await deps.clusterConfig();
  let hint: ReturnType<typeof tscHint>;
  if (config.minimumClusterTSCFrequency !== undefined) {
    hint = tscHint(config.minimumClusterTSCFrequency, () => 0);
  } else {
    const nodes = (await deps.kube.list(NODES, undefined)).items;
    const running = needsVmiNodes(nodes) ? new Set((await deps.kube.list(VMIS, undefined)).items.map((v) => v.status?.nodeName ?? '').filter((n) => n !== '')) : new Set<string>();
    hint = tscHint(undefined, () => lowestTscFrequency(nodes, running));
  }
  if ('error' in hint) return requirement === 'boot' ? { error: hint.error } : {};
  return { vmi: { ...vmi, status: { ...vmi.status, topologyHints: { tscFrequency: hint.hz } } } };
}
