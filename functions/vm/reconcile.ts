/**
 * KubeVirt's VM controller as one stateless reconcile (reference.md §c):
 * observe (VM, its VMI, its templated DataVolumes) → expectations gate → metadata (finalizer) →
 * sync (decide, then act) → status through `/status` → release the VMI once final.
 */
import type { DataVolume, VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, VirtualMachineSpec } from '../../shared/api/index.ts';
import {
  KIND_VM,
  KUBEVIRT_API_VERSION,
  LATEST_OBSERVED_API_VERSION_ANNOTATION,
  STORAGE_OBSERVED_API_VERSION_ANNOTATION,
  VM_CONTROLLER_FINALIZER,
} from '../../shared/api/well-known.ts';
import { errorText, TransientError } from '../../shared/errors.ts';
import { AlreadyExistsError, NotFoundError } from '../../shared/kube/errors.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { checkClone, resolveCloneSource } from './clone-auth.ts';
import { vmiSyncOps } from './vmi-metadata-sync.ts';
import { templateNames, volumeDataVolumeNames } from './data-volumes.ts';
import { DV_EXPECTATIONS, VMI_EXPECTATIONS, type VmDeps } from './deps.ts';
import { expectationsGate, pendingVmiWrites, vmiDeletionKey } from './expectations-gate.ts';
import { isFinal } from './run-strategy.ts';
import { decideSync, vmFinalizerWanted, type Observed, type SyncDecision, type SyncError } from './sync.ts';
import { computeVmStatus } from './update-status.ts';
import { unboundClaimMatters } from './printable-status.ts';
import { cbtStateForNewVmi, needsNamespaceLabels, nextVmCbtState } from './cbt.ts';
import { podNetworkRefusal, startRevision, vmiFromVm } from './vmi-from-vm.ts';
import { expandVmi } from './instancetype/expand-vmi.ts';
import { syncInstancetypes, type Resolved } from './instancetype/sync-step.ts';
import { runStrategyOf } from './run-strategy.ts';
import { createValidationMessage, discontinuedBindingCauses } from '../../shared/network/discontinued.ts';
import { START_REQUEST } from './well-known.ts';
import { syncVolumeHotplug } from './hotplug/step.ts';
import { syncNetworks } from './network/step.ts';
import { syncLiveUpdate, type LiveUpdateResult } from './liveupdate/step.ts';
import { syncGenerationAnnotation } from './generation-annotation.ts';
import { syncMemoryDump } from './memorydump/step.ts';
import { dumpVolumeWanted } from './memorydump/decide.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../shared/config/cluster-config.ts';
import { fieldPatch, metadataPatch } from './write-plan.ts';
import { firmwareUuidPatch } from './firmware-uuid.ts';
import { pciTopologyPatch } from './pci-topology.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, NAMESPACES, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { eventRecorder } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';

/** Seconds a worker that lost the race to start the VMI waits before looking again. */
const LOST_RACE_REQUEUE_SECONDS = 5;

/** Reconciles the VM named by `key` (`namespace/name`). */
export async function reconcileVm(key: string, deps: VmDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;

  // observe
  const vm = await deps.kube.get(VMS, namespace, name, { resourceVersion: rv });
  if (!vm) {
    // Gone: nothing left to wait for. Its VMI and DataVolumes go by garbage collection.
    await deps.expectations.delete(VMI_EXPECTATIONS, key);
    await deps.expectations.delete(DV_EXPECTATIONS, key);
    return done;
  }
  const first = await observe(vm, deps, rv);

  // expectations gate
  const gate = await expectationsGate(key, first, deps, () => observe(vm, deps, undefined));
  let observed = gate.observed;
  const satisfied = gate.kind === 'pass';
  let { creationExpected, deletionExpected } = await pendingVmiWrites(key, deps);

  // metadata: the VM's finalizer (and the observed API version, folded into the same write)
  const meta = await syncVmMetadata(observed, deps);
  if (meta === 'gone') return done;
  observed = { ...observed, vm: meta };

  // the VMI's vm-generation annotation follows a change outside the template (generation-annotation.ts)
  let startSpec: { readonly uid: string | undefined; readonly spec: VirtualMachineSpec | undefined } | undefined;
  if (satisfied && !observed.vm.metadata?.deletionTimestamp && observed.vmi) {
    const r = await syncGenerationAnnotation(observed.vm, observed.vmi, deps);
    observed = { ...observed, vmi: r.vmi };
    if ('startSpec' in r) startSpec = { uid: r.vmi.metadata?.uid, spec: r.startSpec };
  }

  // sync: decide, then act
  let syncError: SyncError | undefined;
  let requeueSeconds: number | undefined = gate.kind === 'wait' ? gate.seconds : undefined;
  // instance types and preferences: pinned, resolved for the start (or a failure that ends the sync)
  let resolved: Resolved = {};
  let proceed = satisfied;
  const config = await (deps.clusterConfig ?? defaultClusterConfig)();
  // CBT's namespace selector matches the VM's namespace labels: read only when one is set (a
  // namespace that is gone selects nothing, as in KubeVirt's namespace informer).
  const namespaceLabels = needsNamespaceLabels(config) ? (await deps.kube.get(NAMESPACES, undefined, namespace))?.metadata?.labels ?? {} : undefined;
  // RestartRequired: what the live-update step decided, or cleared by a start or stop (KubeVirt's cleanupRestartRequired).
  let restartRequired: LiveUpdateResult['restartRequired'];
  let volumeUpdateState: LiveUpdateResult['volumeUpdateState'];
  let startedOrStopped = false;
  let decided: SyncDecision['kind'] | undefined;
  if (satisfied && !observed.vm.metadata?.deletionTimestamp && runStrategyOf(observed.vm).ok) {
    const r = await syncInstancetypes(observed.vm, deps, config);
    observed = { ...observed, vm: r.vm };
    if (r.kind === 'ok') resolved = r.resolved;
    else {
      proceed = false;
      if (r.kind === 'error') {
        syncError = r.error;
        if (r.event !== undefined) await event(deps, r.vm, 'Warning', 'FailedCreate', r.event);
      }
    }
  }
  if (proceed) {
    const decision = decideSync(observed, deps.now());
    decided = decision.kind;
    switch (decision.kind) {
      case 'none':
        syncError = decision.error;
        requeueSeconds = decision.requeueAfterSeconds;
        for (const dv of decision.failedDataVolumes ?? []) {
          await event(deps, observed.vm, 'Warning', 'FailedDataVolumeImport', `DataVolume ${dv} failed to import disk image`);
        }
        break;
      case 'create-data-volumes': {
        const r = await createDataVolumes(key, observed, decision.dataVolumes, deps);
        observed = r.observed;
        syncError = r.error;
        if (r.lostRace) requeueSeconds = LOST_RACE_REQUEUE_SECONDS;
        break;
      }
      case 'start': {
        const r = await startVmi(key, observed.vm, resolved, config, deps, namespaceLabels);
        if (r.kind === 'created') {
          observed = { ...observed, vmi: r.vmi };
          creationExpected = true;
          startedOrStopped = true;
        } else if (r.kind === 'lost-race') {
          creationExpected = true;
          requeueSeconds = LOST_RACE_REQUEUE_SECONDS;
        } else {
          syncError = r.error;
        }
        break;
      }
      case 'stop': {
        const r = await stopVmi(key, observed, decision.restartAfter, deps);
        observed = r.observed;
        syncError = r.error;
        deletionExpected = r.error === undefined;
        startedOrStopped = r.error === undefined;
        break;
      }
      case 'switch-to-always':
        syncError = await switchToAlways(observed.vm, deps);
        break;
    }
  }

  // KubeVirt's synchronisers and request handlers run only while the expectations are still
  // satisfied after the run-strategy step: not in a pass that failed, started or stopped the VMI, or
  // created DataVolumes; and each step's error ends the sync (KubeVirt returns at the first one).
  const settled = proceed && syncError === undefined && !creationExpected && !deletionExpected && decided !== 'create-data-volumes' && !observed.vm.metadata?.deletionTimestamp;

  // NIC hotplug: the template's interfaces onto the VMI, unplugged absent ones dropped (network/step.ts).
  if (settled) {
    const r = await syncNetworks(observed.vm, observed.vmi, deps);
    observed = { ...observed, vm: r.vm, vmi: r.vmi };
    syncError ??= r.error;
  }

  // firmware UUID: the VMIs' UUIDv5 written into a template without one (firmware-uuid.ts), after
  // the NIC sync, as KubeVirt's firmware synchroniser. On a cluster virt-api's VM webhook gives a
  // new VM its UUID at creation, so this only writes for a VM created before that webhook (or
  // with the UUID removed since); a VM started from a template without one had its VMI given the
  // same UUIDv5 (vmi-from-vm.ts), so the write needs no restart.
  if (settled && syncError === undefined) {
    const r = await patchVmSpec(observed.vm, firmwareUuidPatch(observed.vm), deps);
    observed = { ...observed, vm: r.vm };
    if (r.error !== undefined) syncError = { reason: 'FirmwareUUIDError', message: `error encountered when trying to patch VM firmware: ${r.error}`, requeue: true };
  }

  // volume hotplug: status.volumeRequests, declarative hotplug (hotplug/step.ts)
  if (settled && syncError === undefined) {
    const r = await syncVolumeHotplug(observed.vm, observed.vmi, config, deps);
    observed = { ...observed, vm: r.vm, vmi: r.vmi };
    syncError ??= r.error;
  }

  // memory dump: status.memoryDumpRequest (memorydump/)
  let memoryDumpRequest: VirtualMachineMemoryDumpRequest | null | undefined;
  if (settled && syncError === undefined) {
    const r = await syncMemoryDump(observed.vm, observed.vmi, deps);
    observed = { ...observed, vm: r.vm, vmi: r.vmi };
    memoryDumpRequest = r.request;
    syncError ??= r.error;
  }

  // labels and annotations synced template → VMI (vmi-metadata-sync.ts): the descheduler's, the deployment's additional keys
  if (settled && syncError === undefined && observed.vmi && !observed.vmi.metadata?.deletionTimestamp) {
    const ops = vmiSyncOps(observed.vm, observed.vmi, config);
    if (ops.length > 0) {
      try {
        observed = { ...observed, vmi: await deps.kube.patch(VMIS, namespace, observed.vmi.metadata?.name ?? '', { type: 'json', ops }) };
      } catch (err) {
        syncError = { reason: 'AnnotationsLabelsChangeError', message: `Error encountered while handling annotation and labels sync request: ${errorText(err)}`, requeue: true };
      }
    }
  }

  // PCI topology: the VMI's pci-topology annotations copied into a template without them (pci-topology.ts);
  // KubeVirt folds this into the VM update that ends its sync, hence that update's reason and message.
  if (settled && syncError === undefined) {
    const r = await patchVmSpec(observed.vm, pciTopologyPatch(observed.vm, observed.vmi), deps);
    observed = { ...observed, vm: r.vm };
    if (r.error !== undefined) syncError = { reason: 'FailedUpdateError', message: `Error encountered when trying to update vm according to add volume and/or memory dump requests: ${r.error}`, requeue: true };
  }

  // live updates: RestartRequired, CPU / memory hotplug, affinity and tolerations (liveupdate/step.ts)
  const live = observed.vmi;
  if (startedOrStopped) restartRequired = { kind: 'clear' };
  else if (proceed && syncError === undefined && live && !observed.vm.metadata?.deletionTimestamp && !live.metadata?.deletionTimestamp && !isFinal(live)) {
    const r = await syncLiveUpdate(observed.vm, live, resolved, config, deps, startSpec?.uid === live.metadata?.uid ? { startSpec: startSpec?.spec } : {});
    observed = { ...observed, vmi: r.vmi };
    restartRequired = r.restartRequired;
    volumeUpdateState = r.volumeUpdateState;
    syncError ??= r.error;
  }

  // status, from what was observed (and what this pass did)
  const cbtState = nextVmCbtState(observed.vm, observed.vmi, config, namespaceLabels);
  const unboundClaim = await readUnboundClaim(observed, deps);
  const status = computeVmStatus({ observed, syncError, creationExpected, deletionExpected, restartRequired, memoryDumpRequest, volumeUpdateState, cbtState, unboundClaim, now: deps.now(), random: (deps.random ?? Math.random)() });
  const ops = fieldPatch('/status', observed.vm.status, status, undefined, observed.vm.metadata?.resourceVersion);
  if (ops.length > 0) {
    try {
      await deps.kube.patch(VMS, namespace, name, { type: 'json', ops }, { subresource: 'status' });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return done;
    }
  }

  await releaseFinalVmi(observed.vmi, deps);

  // A requeue-type sync error is retried with backoff like any transient error.
  if (syncError?.requeue) throw new TransientError(syncError.reason, syncError.message);
  return requeueSeconds !== undefined ? requeueAfter(wallSeconds(deps, requeueSeconds), 'waiting (expectations or start backoff)') : done;
}

/**
 * printableStatus `WaitingForVolumeBinding` (KubeVirt's HasUnboundPVC): a claim the template's
 * volumes name (PVC, DataVolume, memory dump) exists and is not Bound. Read only while it can
 * decide the status (`unboundClaimMatters`), one GET per claim, first unbound one wins.
 */
async function readUnboundClaim(o: Observed, deps: VmDeps): Promise<boolean> {
  const strategy = runStrategyOf(o.vm);
  if (!unboundClaimMatters(o.vm, strategy.ok ? strategy.strategy : undefined, o.vmi)) return false;
  const volumes = o.vm.spec.template.spec?.volumes ?? [];
  const claims = [...new Set(volumes.map((v) => v.dataVolume?.name ?? v.persistentVolumeClaim?.claimName ?? v.memoryDump?.claimName ?? '').filter((c) => c !== ''))];
  for (const c of claims) {
    const pvc = await deps.kube.get(PVCS, o.vm.metadata?.namespace ?? '', c);
    if (pvc && pvc.status?.phase !== 'Bound') return true;
  }
  return false;
}

/** One JSON patch of the VM (none when `ops` is undefined): the VM as written, or the error's message. */
async function patchVmSpec(vm: VirtualMachine, ops: JsonPatchOperation[] | undefined, deps: VmDeps): Promise<{ vm: VirtualMachine; error?: string }> {
  if (ops === undefined) return { vm };
  try {
    return { vm: await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops }) };
  } catch (err) {
    return { vm, error: errorText(err) };
  }
}

/** KubeVirt's defaults, for harnesses that give the VM controller no cluster config. */
const defaultClusterConfig = async (): Promise<ClusterConfig> => clusterConfigFromKubeVirt(undefined);

/** Seconds on the reconcile's clock → seconds on the queue's wall clock (equal unless the clock is sped up). */
function wallSeconds(deps: VmDeps, seconds: number): number {
  return Math.max(0.05, seconds / (deps.clockSpeed ?? 1));
}

/** The VMI of the same name (claimed: controlled by this VM, or adopted), the templated DataVolumes and those the volumes name. */
async function observe(vm: VirtualMachine, deps: VmDeps, rv: string | undefined): Promise<Observed> {
  const namespace = vm.metadata?.namespace ?? '';
  const names = [...new Set([...templateNames(vm), ...volumeDataVolumeNames(vm)])];
  const [vmi, ...dvs] = await Promise.all([
    deps.kube.get(VMIS, namespace, vm.metadata?.name ?? '', { resourceVersion: rv }),
    ...names.map((n) => deps.kube.get(DATA_VOLUMES, namespace, n, { resourceVersion: rv })),
  ]);
  const dataVolumes = new Map<string, DataVolume>();
  names.forEach((n, i) => {
    const dv = dvs[i] as DataVolume | undefined;
    if (dv) dataVolumes.set(n, dv);
  });
  const claimed = vmi ? await claimVmi(vm, vmi as VirtualMachineInstance, deps) : undefined;
  return {
    vm,
    vmi: claimed,
    foreignVmi: claimed ? undefined : (vmi as VirtualMachineInstance | undefined),
    dataVolumes,
  };
}

function isControlledBy(vmi: VirtualMachineInstance, vm: VirtualMachine): boolean {
  return (vmi.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.kind === KIND_VM && r.uid === vm.metadata?.uid);
}

/**
 * KubeVirt's controller-ref manager for the VMI of the VM's name: controlled by this VM → ours;
 * controlled by another → not ours (the sync reports it); an orphan → adopted, unless the VM or
 * the VMI is being deleted. Before adopting, a quorum read of the VM makes sure it is still the
 * same VM and not being deleted (kubernetes/kubernetes#42639). The adoption is KubeVirt's merge
 * patch: the controller reference as the only owner reference, with the VMI's UID as precondition.
 */
async function claimVmi(vm: VirtualMachine, vmi: VirtualMachineInstance, deps: VmDeps): Promise<VirtualMachineInstance | undefined> {
  if (isControlledBy(vmi, vm)) return vmi;
  const controlled = (vmi.metadata?.ownerReferences ?? []).some((r) => r.controller === true);
  if (controlled || vm.metadata?.deletionTimestamp || vmi.metadata?.deletionTimestamp) return undefined;
  const namespace = vm.metadata?.namespace ?? '';
  const name = vm.metadata?.name ?? '';
  const fresh = await deps.kube.get(VMS, namespace, name);
  const cannot = (why: string) => new TransientError('FailedAdopt', `can't adopt VirtualMachineInstance ${namespace}/${name} (${vmi.metadata?.uid ?? ''}): ${why}`);
  if (!fresh || fresh.metadata?.uid !== vm.metadata?.uid) throw cannot(`original VirtualMachine ${namespace}/${name} is gone: got uid ${fresh?.metadata?.uid ?? ''}, wanted ${vm.metadata?.uid ?? ''}`);
  if (fresh.metadata?.deletionTimestamp) throw cannot(`${namespace}/${name} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  const ownerReferences = [{ apiVersion: KUBEVIRT_API_VERSION, kind: KIND_VM, name, uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
  try {
    return await deps.kube.patch(VMIS, namespace, vmi.metadata?.name ?? '', { type: 'merge', body: { metadata: { ownerReferences, uid: vmi.metadata?.uid } } });
  } catch (err) {
    // Gone meanwhile: nothing to adopt.
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * Adds the VM's finalizer while it lives (so its VMI is stopped before it goes) and removes it
 * once there is nothing left to stop. Returns the VM as written, or 'gone' when the finalizer
 * removal lets the VM go (nothing left to report on).
 */
async function syncVmMetadata(o: Observed, deps: VmDeps): Promise<VirtualMachine | 'gone'> {
  const { vm } = o;
  const before = vm.metadata ?? {};
  const finalizers = before.finalizers ?? [];
  const want = vmFinalizerWanted(o);
  const after = structuredClone(before);
  if (want && !finalizers.includes(VM_CONTROLLER_FINALIZER)) after.finalizers = [...finalizers, VM_CONTROLLER_FINALIZER];
  if (!want && finalizers.includes(VM_CONTROLLER_FINALIZER)) {
    const kept = finalizers.filter((f) => f !== VM_CONTROLLER_FINALIZER);
    if (kept.length > 0) after.finalizers = kept;
    else delete after.finalizers;
  }
  if (want && before.annotations?.[LATEST_OBSERVED_API_VERSION_ANNOTATION] !== 'v1') {
    after.annotations = { ...before.annotations, [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' };
  }
  const ops = metadataPatch(before.resourceVersion, before, after, ['finalizers', 'annotations']);
  if (ops.length === 0) return vm;
  try {
    const written = await deps.kube.patch(VMS, before.namespace ?? '', before.name ?? '', { type: 'json', ops });
    return want ? written : 'gone';
  } catch (err) {
    if (err instanceof NotFoundError) return 'gone';
    throw err;
  }
}

interface DvResult {
  readonly observed: Observed;
  readonly error?: SyncError;
  readonly lostRace?: boolean;
}

async function createDataVolumes(key: string, o: Observed, dvs: readonly DataVolume[], deps: VmDeps): Promise<DvResult> {
  // A clone's source as KubeVirt writes it (a DataSource resolved); from another namespace, the VM's
  // service account must be allowed to read it (clone-auth.ts).
  const resolvedDvs: DataVolume[] = [];
  for (const template of dvs) {
    const r = await resolveCloneSource(deps.kube, o.vm.metadata?.namespace ?? '', template);
    if ('error' in r) return { observed: o, error: { reason: 'FailedCreate', message: `Error encountered while creating DataVolumes: ${r.error}`, requeue: true } };
    const dv = r.dv;
    resolvedDvs.push(dv);
    const check = await checkClone(deps.kube, o.vm, dv);
    if (check.sourceMissing) await event(deps, o.vm, 'Warning', 'SourcePVCNotAvailabe', check.sourceMissing);
    if (check.refused) {
      await event(deps, o.vm, 'Warning', 'UnauthorizedDataVolumeCreate', `Not authorized to create DataVolume ${dv.metadata?.name ?? ''}: ${check.refused}`);
      return { observed: o, error: { reason: 'FailedCreate', message: `Error encountered while creating DataVolumes: not authorized to create DataVolume: ${check.refused}`, requeue: true } };
    }
  }
  // Recorded before the writes, conditionally: of N racing workers one creates the DataVolumes.
  if (!(await deps.expectations.tryExpectCreations(DV_EXPECTATIONS, key, dvs.length, deps.now()))) return { observed: o, lostRace: true };
  const dataVolumes = new Map(o.dataVolumes);
  for (const dv of resolvedDvs) {
    const dvName = dv.metadata?.name ?? '';
    try {
      dataVolumes.set(dvName, await deps.kube.create(DATA_VOLUMES, dv));
      await event(deps, o.vm, 'Normal', 'SuccessfulDataVolumeCreate', `Created DataVolume ${dvName}`);
    } catch (err) {
      await deps.expectations.creationObserved(DV_EXPECTATIONS, key);
      // Created meanwhile (a lagging read): it is there, which is all we wanted.
      if (err instanceof AlreadyExistsError) continue;
      const message = `Error creating DataVolume ${dvName}: ${errorText(err)}`;
      await event(deps, o.vm, 'Warning', 'FailedDataVolumeCreate', message);
      return { observed: { ...o, dataVolumes }, error: { reason: 'FailedDataVolumeCreate', message, requeue: true } };
    }
  }
  return { observed: { ...o, dataVolumes } };
}

type StartResult = { kind: 'created'; vmi: VirtualMachineInstance } | { kind: 'lost-race' } | { kind: 'failed'; error: SyncError };

async function startVmi(key: string, vm: VirtualMachine, resolved: Resolved, config: ClusterConfig, deps: VmDeps, namespaceLabels: Record<string, string> | undefined): Promise<StartResult> {
  // The cluster's default pod interface may be one it refuses (bridge not permitted on the pod network).
  const refused = podNetworkRefusal(vm, config);
  if (refused) return { kind: 'failed', error: { reason: 'FailedCreate', message: `Failure while starting VMI: ${refused}`, requeue: true } };
  const expanded = expandVmi(vmiFromVm(vm, resolved.preference?.spec, config), resolved);
  if (!expanded.ok) {
    await event(deps, vm, 'Warning', 'FailedCreate', `Error creating virtual machine instance: ${expanded.message}`);
    return { kind: 'failed', error: { reason: 'FailedCreate', message: `Failure while starting VMI: ${expanded.message}`, requeue: true } };
  }
  // What virt-api's VMI webhook adds at create (hotplug maxima, input bus and type, runtimeUser,
  // the status fields) is not the controller's: KubeVirt's VM controller creates the VMI without them.
  const vmi = expanded.vmi;
  // Changed-block tracking starts Initializing on a selected VM's VMI (virt-handler enables it).
  const cbt = cbtStateForNewVmi(vm, config, namespaceLabels);
  if (cbt) vmi.status = { ...vmi.status, changedBlockTracking: { state: cbt } };
  // A dump volume whose dump is over stays in the template but not in a new VMI (§7).
  const dump = vm.status?.memoryDumpRequest;
  if (dump && !dumpVolumeWanted(dump) && vmi.spec.volumes) vmi.spec.volumes = vmi.spec.volumes.filter((v) => !(v.name === dump.claimName && v.memoryDump));
  // The discontinued network bindings are refused here too, before a VMI exists (reference-vm-vmi-depth §6);
  // after the expansion, as upstream validates the VMI it would create.
  const causes = discontinuedBindingCauses(vmi.spec);
  if (causes.length > 0) return { kind: 'failed', error: { reason: 'FailedCreate', message: `Failure while starting VMI: ${createValidationMessage(causes)}`, requeue: false } };
  // Of N workers racing on this key (duplicate delivery, a crash between create and record), one wins.
  if (!(await deps.expectations.tryExpectCreations(VMI_EXPECTATIONS, key, 1, deps.now()))) return { kind: 'lost-race' };
  try {
    await createStartRevision(vm, deps);
    const created = await deps.kube.create(VMIS, vmi);
    await event(deps, vm, 'Normal', 'SuccessfulCreate', `Started the virtual machine by creating the new virtual machine instance ${created.metadata?.name ?? ''}`);
    return { kind: 'created', vmi: created };
  } catch (err) {
    await deps.expectations.creationObserved(VMI_EXPECTATIONS, key);
    const message = `Failure while starting VMI: ${errorText(err)}`;
    await event(deps, vm, 'Warning', 'FailedCreate', `Error creating virtual machine instance: ${errorText(err)}`);
    return { kind: 'failed', error: { reason: 'FailedCreate', message, requeue: true } };
  }
}

async function stopVmi(key: string, o: Observed, restartAfter: boolean, deps: VmDeps): Promise<{ observed: Observed; error?: SyncError }> {
  const vmi = o.vmi!;
  let vm = o.vm;
  const requests = vm.status?.stateChangeRequests;
  if (restartAfter && !requests?.some((r) => r.action === START_REQUEST)) {
    // Written before the delete: were it written after, a crash in between would lose the restart
    // (the next pass sees a terminating VMI and nothing asking for a new one).
    const next = [...(requests ?? []), { action: START_REQUEST }];
    // An `add` of the list (absent in our read) would replace one virt-api added since: guarded by the resourceVersion.
    const ops = fieldPatch('/status', vm.status, { ...vm.status, stateChangeRequests: next }, ['stateChangeRequests'], vm.metadata?.resourceVersion);
    if (requests === undefined && vm.status !== undefined) ops.unshift({ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion });
    vm = await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops }, { subresource: 'status' });
  }
  const deleteKey = vmiDeletionKey(vmi);
  await deps.expectations.expectDeletions(VMI_EXPECTATIONS, key, [deleteKey], deps.now());
  try {
    // The UID precondition: never delete a newer VMI of the same name than the one we judged.
    const existed = await deps.kube.delete(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { preconditions: { uid: vmi.metadata?.uid } });
    if (!existed) await deps.expectations.deletionObserved(VMI_EXPECTATIONS, key, deleteKey);
    await event(deps, vm, 'Normal', 'SuccessfulDelete', `Stopped the virtual machine by deleting the virtual machine instance ${vmi.metadata?.uid ?? ''}`);
    return { observed: { ...o, vm } };
  } catch (err) {
    await deps.expectations.deletionObserved(VMI_EXPECTATIONS, key, deleteKey);
    const message = `Error deleting virtual machine instance ${vmi.metadata?.name ?? ''}: ${errorText(err)}`;
    await event(deps, vm, 'Warning', 'FailedDelete', message);
    return { observed: { ...o, vm }, error: { reason: 'FailedDelete', message, requeue: true } };
  }
}

/**
 * The revision the VMI starts from. Its name is per VM UID and generation, and the generation
 * moves with every spec change, so one that already exists holds this very spec.
 */
async function createStartRevision(vm: VirtualMachine, deps: VmDeps): Promise<void> {
  try {
    await deps.kube.create(CONTROLLER_REVISIONS, startRevision(vm));
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

/**
 * A Start request on a Halted VM (`virtctl start` on a stopped VM): switch the spec to Always (or
 * `running: true` for a legacy VM). KubeVirt reports this pass as a FailedCreate sync error even
 * when the update succeeds, so the key is retried and the next pass starts the VMI under Always.
 */
async function switchToAlways(vm: VirtualMachine, deps: VmDeps): Promise<SyncError> {
  const legacy = vm.spec.running !== undefined;
  const ops = legacy
    ? [{ op: 'test' as const, path: '/spec/running', value: false }, { op: 'replace' as const, path: '/spec/running', value: true }]
    : vm.spec.runStrategy !== undefined
      ? [{ op: 'test' as const, path: '/spec/runStrategy', value: vm.spec.runStrategy }, { op: 'replace' as const, path: '/spec/runStrategy', value: 'Always' }]
      : [{ op: 'test' as const, path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add' as const, path: '/spec/runStrategy', value: 'Always' }];
  let why = 'VM was halted, switching its run strategy to Always';
  try {
    await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    why = errorText(err);
    await event(deps, vm, 'Warning', 'FailedUpdate', `Error updating the run strategy: ${why}`);
  }
  return { reason: 'FailedCreate', message: `Failure while starting VMI: ${why}`, requeue: true };
}

/**
 * Lets a final VMI go: the VM controller's finalizer is what keeps a stopped VMI around until the
 * VM has recorded how it ended (start failures, printableStatus).
 */
async function releaseFinalVmi(vmi: VirtualMachineInstance | undefined, deps: VmDeps): Promise<void> {
  if (!vmi) return;
  const finalizers = vmi.metadata?.finalizers ?? [];
  if (!finalizers.includes(VM_CONTROLLER_FINALIZER)) return;
  const waitingAndDeleting = vmi.status?.phase === 'WaitingForSync' && Boolean(vmi.metadata?.deletionTimestamp);
  if (!isFinal(vmi) && !waitingAndDeleting) return;
  const ops = fieldPatch('/metadata', vmi.metadata, { ...vmi.metadata, finalizers: finalizers.filter((f) => f !== VM_CONTROLLER_FINALIZER) }, ['finalizers']);
  try {
    await deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/** Events about the VM (best effort, shared/reconcile/events.ts). */
const event = eventRecorder(KUBEVIRT_API_VERSION, KIND_VM, EVENT_COMPONENT.vm);

