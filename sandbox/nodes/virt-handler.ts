/**
 * The sandbox's virt-handler (one loop for every node), as strict as KubeVirt's
 * (`pkg/virt-handler/vm.go`, `migration-source.go`, `migration-target.go`, `cbt.go`):
 *
 * - it sees only VMIs labelled `kubevirt.io/nodeName` with a node it serves (its informer's
 *   selector), and acts on them once the VMI controller has handed them off (`Scheduled`);
 * - its launcher is the pod `status.activePods` names on the node: none, gone, or a `compute`
 *   that ended, and the launcher is unresponsive → `Failed` (Warning `Stopped`);
 * - every status update writes `selinuxContext`, `LiveMigratable` / `StorageLiveMigratable` by
 *   KubeVirt's rules and `migrationMethod` (vmi-owner-status.ts, vmi-migratable.ts), failing or not;
 * - the start preconditions run in KubeVirt's order (vmi-start-checks.ts): an error is a
 *   `SyncFailed` event and `Synchronized=False` with the VMI left `Scheduled` (or `Failed` for a
 *   critical network error); then the domain is defined (`Created`) and boots to `Running`
 *   (`Started`) after `bootMs`;
 * - hotplugged volumes move through the handler's phases (hotplug-volumes.ts) once their
 *   attachment pod is ready on this node; NICs are plugged (nic-hotplug.ts);
 * - changed-block tracking goes `Initializing` → `Enabled` once a domain defined with the
 *   overlays runs, after marking the VMI's backup trackers for checkpoint redefinition;
 * - handed-off migrations run step by step ({@link nextMigrationStep}): the target only with the
 *   VMI labelled `kubevirt.io/migrationTargetNodeName` for its node and its pod passing the device
 *   checks, the source only from the node it runs on; a hand-off without a target node fails the
 *   VMI. When the transfer ends the source launcher's libvirt hook marks its backend claim
 *   `meta/migrated` in the sandbox's claim files.
 *
 * Durations are simulated ms on the sandbox clock.
 */
import { KUBEVIRT, MERGE_PATCH, isNotFound, listAllPods, listAllVmis, listNodes, type NodeSideApi } from './api.ts';
import { KeyWorker } from './key-worker.ts';
import { isLauncherPod, owningVmi } from './launcher-exit.ts';
import { DEFAULT_MIGRATION_TIMINGS, MIGRATION_TARGET_NODE_LABEL, activeMigration, nextMigrationStep, type MigrationTimings } from './migration-steps.ts';
import { interfacesOf, runningVmiStatus } from './vmi-running-status.ts';
import { nextHotplugVolumeStatus } from './hotplug-volumes.ts';
import { nextInterfaceStatus } from './nic-hotplug.ts';
import type { Informer } from './shared-informers.ts';
import type { ClaimFiles } from './claim-files.ts';
import type { EventRecorder, EventType } from './events.ts';
import { DEFAULT_HANDLER_CONFIG, handlerConfigOf, type HandlerConfig } from './vmi-migratable.ts';
import { startVerdict } from './vmi-start-checks.ts';
import { SELINUX_CONTEXT_ANNOTATION } from './node-pool.ts';
import { LAUNCHER_SOCKET_TIMEOUT_MS, NODE_NAME_LABEL, everyUpdateFields, launcherState, sameConditions, scheduledAtMs, withSyncFailure, withoutSyncFailure } from './vmi-owner-status.ts';
import { cbtStep, trackersToMark, type Tracker } from './cbt-steps.ts';
import { applyMergePatch } from '../apiserver/merge-patch.ts';
import { goVmiCondition, isTerminalPhase, keyOf, splitKey, timeMs, type Condition, type KubeObject, type Node, type Pod, type Vmi } from './objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';


/** The SELinux context the node's handler reports (node-pool.ts `selinuxContext`; `none` by default). */
const selinuxOf = (node: Node | undefined): string => node?.metadata?.annotations?.[SELINUX_CONTEXT_ANNOTATION] ?? 'none';
export interface VirtHandlerOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from the domain being defined to Running; default 1000. */
  bootMs?: number;
  /** Simulated ms from a VMI's deletion to its domain being shut down; default 1000. */
  shutdownMs?: number;
  /** Simulated ms each hotplug volume step takes (mount, attach, unmount); default 200. */
  hotplugMs?: number;
  migration?: Partial<MigrationTimings>;
  /** False for a node whose virt-handler is stopped (a fault): its VMIs are left alone. */
  serves?: (nodeName: string) => boolean;
  /** Claim contents: a source launcher marks its backend claim `meta/migrated` when its domain has left. */
  files?: ClaimFiles;
  /** Where the handler's events go; none when absent. */
  events?: EventRecorder;
  onError?: (what: string, err: unknown) => void;
}

/** A running virt-handler fleet; see {@link startVirtHandler}. */
export interface VirtHandler {
  /** Test hook: the VMI's current or next migration fails with `reason` instead of completing. */
  failMigration(namespace: string, name: string, reason?: string): void;
  /** Test hook: the memory hotplug the VMI's next migration carries fails (`HotMemoryChange=False`). */
  failMemoryHotplug(namespace: string, name: string): void;
  /**
   * Test hook: the target of the VMI's next migration is lost the moment the memory transfer ends —
   * the source has let its domain go (and marked its backend claim `meta/migrated`), then the
   * target pod vanishes before the target reports its domain: the case KubeVirt's recovery Job is for.
   */
  loseTargetAfterTransfer(namespace: string, name: string): void;
  restarts(): number;
  stop(): Promise<void>;
}

const VMIS = { ...KUBEVIRT, plural: 'virtualmachineinstances' } as const;
const TRACKERS = { group: 'backup.kubevirt.io', version: 'v1alpha1', plural: 'virtualmachinebackuptrackers' } as const;
const HOTPLUG_POD_LABEL = 'hotplug-disk';
/** The handler's re-queue after a failed start: 1 s doubling, as its rate limiter, capped at 5 min. */
const RETRY_MAX_MS = 300_000;

const isHandlerPod = (p: Pod) => isLauncherPod(p) || p.metadata?.labels?.['kubevirt.io'] === HOTPLUG_POD_LABEL;

export async function startVirtHandler(opts: VirtHandlerOptions): Promise<VirtHandler> {
  const { api, clock } = opts;
  const bootMs = opts.bootMs ?? 1000;
  const shutdownMs = opts.shutdownMs ?? 1000;
  const hotplugMs = opts.hotplugMs ?? 200;
  const timings: MigrationTimings = { ...DEFAULT_MIGRATION_TIMINGS, ...opts.migration };
  const failures = new Map<string, string>();
  const memoryFailures = new Set<string>();
  const targetLosses = new Set<string>();
  // When each delayed step was first due, keyed by VMI key + step: a step's timer counts from
  // the moment its preconditions first held, like a real handler's work taking that long.
  const since = new Map<string, number>();
  const timers = new Map<string, ClockTimer>();
  // Domains defined (by VMI uid), and whether CBT overlays were applied when they were.
  const domains = new Map<string, { cbtOverlays: boolean }>();
  const retries = new Map<string, number>();

  const event = (vmi: Vmi, type: EventType, reason: string, message: string, host?: string) =>
    opts.events?.record({ ...vmi, kind: 'VirtualMachineInstance', apiVersion: 'kubevirt.io/v1' }, type, reason, message, { component: 'virt-handler', ...(host ? { host } : {}) });

  const vmis: Informer<Vmi> = api.informers.informer<Vmi>({
    path: '/apis/kubevirt.io/v1/virtualmachineinstances',
    list: listAllVmis(api),
    onError: (e) => opts.onError?.('virt-handler vmi informer', e),
    onEvent: (event, vmi) => {
      if (event === 'delete') forget(vmi);
      worker.add(keyOf(vmi));
    },
  });
  // Launcher and attachment pods only, picked out of the node side's one pod watch (the kubelet's
  // and the scheduler's) rather than a watch of their own: each pod event is then parsed once here.
  const pods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    where: isHandlerPod,
    list: listAllPods(api),
    onError: (e) => opts.onError?.('virt-handler pod informer', e),
    onEvent: (_event, pod) => {
      const owner = owningVmi(pod);
      if (owner) worker.add(`${pod.metadata?.namespace ?? ''}/${owner.name}`);
      const hp = pod.metadata?.annotations?.['kubevirt.io/owner-vmi-name'];
      if (hp) worker.add(`${pod.metadata?.namespace ?? ''}/${hp}`);
    },
    indexes: {
      vmi: (p) => {
        const uid = owningVmi(p)?.uid;
        return uid ? [uid] : [];
      },
      uid: (p) => [p.metadata?.uid ?? ''],
    },
  });
  // A node's devices change what a launcher finds: VMIs on it are looked at again.
  const nodes: Informer<Node> = api.informers.informer<Node>({
    path: '/api/v1/nodes',
    list: listNodes(api),
    onError: (e) => opts.onError?.('virt-handler node informer', e),
    onEvent: (_event, node) => {
      for (const v of vmis.list()) if (v.metadata?.labels?.[NODE_NAME_LABEL] === node.metadata?.name) worker.add(keyOf(v));
    },
  });
  const kubevirts: Informer<KubeObject> = api.informers.informer<KubeObject>({
    path: '/apis/kubevirt.io/v1/kubevirts',
    list: async () => (await api.custom.listClusterCustomObject({ ...KUBEVIRT, plural: 'kubevirts' })) as never,
    onError: (e) => opts.onError?.('virt-handler kubevirt informer', e),
    onEvent: () => {
      for (const v of vmis.list()) worker.add(keyOf(v));
    },
  });
  const trackers: Informer<Tracker> = api.informers.informer<Tracker>({
    path: `/apis/${TRACKERS.group}/${TRACKERS.version}/${TRACKERS.plural}`,
    list: async () => (await api.custom.listClusterCustomObject(TRACKERS)) as never,
    onError: (e) => opts.onError?.('virt-handler backup tracker informer', e),
    onEvent: () => undefined,
  });
  const config = (): HandlerConfig => handlerConfigOf(kubevirts.list()[0] as never) ?? DEFAULT_HANDLER_CONFIG;

  function forget(vmi: Vmi) {
    const key = keyOf(vmi);
    for (const k of [...since.keys()]) if (k.startsWith(`${key}#`)) since.delete(k);
    clock.clearTimeout(timers.get(key));
    timers.delete(key);
    domains.delete(vmi.metadata?.uid ?? '');
    retries.delete(key);
  }

  const wakeIn = (key: string, delayMs: number) => {
    const at = clock.nowMs() + delayMs;
    const existing = timers.get(key);
    if (existing && existing.dueMs <= at) return;
    clock.clearTimeout(existing);
    timers.set(key, clock.setTimeout(() => {
      timers.delete(key);
      worker.add(key);
    }, delayMs));
  };

  /** True once `delayMs` simulated ms have passed since `step` first became due; else arms a wake-up. */
  const due = (key: string, step: string, delayMs: number): boolean => {
    const id = `${key}#${step}`;
    let start = since.get(id);
    if (start === undefined) since.set(id, (start = clock.nowMs()));
    if (clock.nowMs() >= start + delayMs) {
      since.delete(id);
      return true;
    }
    wakeIn(key, start + delayMs - clock.nowMs());
    return false;
  };
  /** Re-queues a failing key with the handler's backoff. */
  const retryLater = (key: string) => {
    const n = (retries.get(key) ?? 0) + 1;
    retries.set(key, n);
    wakeIn(key, Math.min(RETRY_MAX_MS, 1000 * 2 ** Math.min(n - 1, 12)));
  };

  const podByUid = (uid: string) => pods.byIndex('uid', uid)[0];
  const launcherOn = (vmi: Vmi, nodeName: string | undefined): Pod | undefined =>
    pods
      .byIndex('vmi', vmi.metadata?.uid ?? '')
      .filter((p) => p.spec?.nodeName === nodeName)
      .sort((a, b) => (timeMs(b.metadata?.creationTimestamp) ?? 0) - (timeMs(a.metadata?.creationTimestamp) ?? 0))[0];

  // VMIs have no status subresource (as in KubeVirt): status and labels go in one update of the
  // object itself, as virt-handler's `Update` does — the handler's change applied to its cached VMI
  // as a merge patch would be, the conditions as Go marshals them (objects.ts goVmiCondition: null
  // times kept, which a merge patch would delete, and KubeVirt's virt-controller tests them in its
  // own patches). The cached resourceVersion is the precondition: a decision taken on a stale cache
  // must not land (409, retried).
  const patchVmi = async (vmi: Vmi, change: { status?: Record<string, unknown>; labels?: Record<string, string | null> }) => {
    const { namespace = '', name = '' } = vmi.metadata ?? {};
    // The merge shares every subtree it does not change with the cached VMI, which is never written to.
    const merged = applyMergePatch(vmi, { ...(change.labels ? { metadata: { labels: change.labels } } : {}), ...(change.status ? { status: change.status } : {}) }) as Vmi;
    const conditions = merged.status?.conditions;
    const body = Array.isArray(conditions) ? { ...merged, status: { ...merged.status, conditions: conditions.map(goVmiCondition) } } : merged;
    await api.custom.replaceNamespacedCustomObject({ ...VMIS, namespace, name, body });
  };
  const patchStatus = (vmi: Vmi, status: Record<string, unknown>) => patchVmi(vmi, { status });
  const baseConditions = (vmi: Vmi, base: Record<string, unknown>): Condition[] => (base['conditions'] as Condition[] | undefined) ?? vmi.status?.conditions ?? [];
  const transitions = (vmi: Vmi, phase: string, now: string) => ({ phaseTransitionTimestamps: [...((vmi.status?.['phaseTransitionTimestamps'] ?? []) as unknown[]), { phase, phaseTransitionTimestamp: now }] });

  /** The phase change to a final phase, with its event (`recordPhaseChangeEvent`). */
  const finish = async (vmi: Vmi, phase: 'Succeeded' | 'Failed', host: string, extra: Record<string, unknown> = {}) => {
    await patchStatus(vmi, { phase, ...transitions(vmi, phase, clock.isoNow()), ...extra });
    if (phase === 'Failed') event(vmi, 'Warning', 'Stopped', 'The VirtualMachineInstance crashed.', host);
    else event(vmi, 'Normal', 'Stopped', 'The VirtualMachineInstance was shut down.', host);
  };

  /** A `Scheduled` VMI without a domain: the start path (§1.2, §1.3 of the reference). */
  const startVmi = async (key: string, vmi: Vmi, host: string, node: Node | undefined) => {
    const uid = vmi.metadata?.uid ?? '';
    const now = clock.isoNow();
    const launcher = launcherState(vmi, host, podByUid);
    if (launcher.state === 'gone') return finish(vmi, 'Failed', host);
    const base = everyUpdateFields(vmi, config(), node?.metadata?.labels, selinuxOf(node));
    if (launcher.state === 'starting') {
      const since = scheduledAtMs(vmi) ?? clock.nowMs();
      if (clock.nowMs() - since >= LAUNCHER_SOCKET_TIMEOUT_MS) return finish(vmi, 'Failed', host, base);
      if (Object.keys(base).length > 0) await patchStatus(vmi, base);
      return wakeIn(key, Math.max(1000, since + LAUNCHER_SOCKET_TIMEOUT_MS - clock.nowMs()));
    }
    if (!domains.has(uid)) {
      // Hotplug volumes are mounted into the starting launcher before the gate that waits for them.
      if (await hotplugStep(key, vmi, host, false)) return;
      const verdict = startVerdict({ vmi, pod: launcher.pod, node, config: config() });
      if (verdict.kind === 'wait') {
        if (Object.keys(base).length > 0) await patchStatus(vmi, base);
        return retryLater(key);
      }
      if (verdict.kind === 'error') {
        const conditions = withSyncFailure(baseConditions(vmi, base), verdict.message, now);
        event(vmi, 'Warning', 'SyncFailed', verdict.message, host);
        if (verdict.critical) return finish(vmi, 'Failed', host, { ...base, conditions });
        const change = { ...base, conditions };
        if (!sameConditions(change.conditions, vmi.status?.conditions ?? []) || Object.keys(base).length > 0) await patchStatus(vmi, change);
        return retryLater(key);
      }
      retries.delete(key);
      const cbt = (vmi.status?.['changedBlockTracking'] as { state?: string } | undefined)?.state;
      domains.set(uid, { cbtOverlays: cbt === 'Initializing' || cbt === 'Enabled' });
      event(vmi, 'Normal', 'Created', 'VirtualMachineInstance defined.', host);
      const conditions = withoutSyncFailure(baseConditions(vmi, base));
      const change = { ...base, conditions };
      if (!sameConditions(conditions, vmi.status?.conditions ?? []) || Object.keys(base).length > 0) return patchStatus(vmi, change);
    }
    if (!due(key, 'boot', bootMs)) return;
    const running = { ...vmi, status: { ...vmi.status, ...runningVmiStatus(vmi, launcher.pod, now) } } as Vmi;
    await patchStatus(vmi, { ...runningVmiStatus(vmi, launcher.pod, now), ...everyUpdateFields(running, config(), node?.metadata?.labels, selinuxOf(node)) });
    event(vmi, 'Normal', 'Started', 'VirtualMachineInstance started.', host);
  };

  /** A `Running` VMI the handler owns: launcher end, status refresh, CBT, hotplug. */
  const syncRunning = async (key: string, vmi: Vmi, host: string, node: Node | undefined) => {
    const uid = vmi.metadata?.uid ?? '';
    const launcher = launcherOn(vmi, host);
    if (launcher && isTerminalPhase(launcher.status?.phase)) return finish(vmi, launcher.status?.phase === 'Failed' ? 'Failed' : 'Succeeded', host);
    // A handler restarted under a running VMI finds its domain there.
    if (!domains.has(uid)) domains.set(uid, { cbtOverlays: (vmi.status?.['changedBlockTracking'] as { state?: string } | undefined)?.state !== undefined });
    const base = everyUpdateFields(vmi, config(), node?.metadata?.labels, selinuxOf(node));
    if (Object.keys(base).length > 0) return patchStatus(vmi, base);
    const cbt = cbtStep(vmi, domains.get(uid)?.cbtOverlays === true);
    if (cbt) {
      for (const t of trackersToMark(vmi, trackers.list(vmi.metadata?.namespace))) {
        await api.custom.patchNamespacedCustomObjectStatus({ ...TRACKERS, namespace: t.metadata?.namespace ?? '', name: t.metadata?.name ?? '', body: { status: { checkpointRedefinitionRequired: true } } }, MERGE_PATCH);
      }
      return patchStatus(vmi, cbt);
    }
    await hotplugStep(key, vmi, host, true);
  };

  /**
   * Hotplugged volumes: mounted once their attachment pod is ready here, attached to the domain
   * (when there is one), unmounted when unplugged; NICs attached once the pod has them, detached
   * when absent. One step per `hotplugMs`; answers whether it wrote.
   */
  const hotplugStep = async (key: string, vmi: Vmi, host: string, domainExists: boolean): Promise<boolean> => {
    const now = clock.isoNow();
    const attachmentReady = (podUid: string) => {
      const p = podByUid(podUid);
      const statuses = p?.status?.containerStatuses ?? [];
      return p?.spec?.nodeName === host && statuses.length === 1 && statuses[0]!.ready === true;
    };
    const volumeStatus = nextHotplugVolumeStatus(vmi, now, attachmentReady, domainExists);
    const step = volumeStatus?.map((s) => `${s.name}=${s.phase ?? ''}`).join(',');
    const interfaces = domainExists ? nextInterfaceStatus(vmi) : undefined;
    const nicStep = interfaces?.map((s) => `${s.name ?? ''}=${s.infoSource ?? ''}`).join(',');
    const volumesDue = volumeStatus !== undefined && due(key, `hotplug/${step ?? ''}`, hotplugMs);
    const nicsDue = interfaces !== undefined && due(key, `nic/${nicStep ?? ''}`, hotplugMs);
    if (!volumesDue && !nicsDue) return false;
    await patchStatus(vmi, { ...(volumesDue ? { volumeStatus } : {}), ...(nicsDue ? { interfaces } : {}) });
    const before = (vmi.status?.['volumeStatus'] as { name: string; reason?: string }[] | undefined) ?? [];
    if (volumesDue) for (const s of volumeStatus ?? []) if (s.reason && !before.some((o) => o.name === s.name && o.reason === s.reason)) event(vmi, 'Normal', s.reason, s.message ?? '', host);
    return true;
  };

  /** A handed-off migration: source and target handlers' steps, each on its own node. */
  const syncMigration = async (key: string, vmi: Vmi, host: string) => {
    const { namespace } = splitKey(key);
    const ms = activeMigration(vmi)!;
    const targetNode = ms.targetNode ?? '';
    const targetPod = pods.get(namespace, ms.targetPod ?? '');
    const now = clock.isoNow();
    const step = nextMigrationStep({
      vmi,
      targetPod,
      nodeAddress: (n) => nodes.get('', n)?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address,
      failWith: failures.get(key) ?? failures.get(`*`),
      nowIso: now,
      timings,
      targetInterfaces: (pod) => interfacesOf(vmi, pod.status?.podIP),
      failMemoryHotplug: memoryFailures.has(key),
    });
    if (!step) return;
    // The target handler sees the VMI only through its label; its node's handler must run.
    const targetSide = step.step === 'prepare-target' || step.step === 'target-domain-ready' || step.step === 'complete';
    if (targetSide) {
      if (vmi.metadata?.labels?.[MIGRATION_TARGET_NODE_LABEL] !== targetNode || opts.serves?.(targetNode) === false) return;
      if (step.step === 'prepare-target' && targetPod) {
        const verdict = startVerdict({ vmi, pod: targetPod, node: nodes.get('', targetNode), config: config() });
        if (verdict.kind !== 'ok') {
          if (verdict.kind === 'error') event(vmi, 'Warning', 'SyncFailed', verdict.message, targetNode);
          return retryLater(key);
        }
      }
    } else if (opts.serves?.(host) === false || (ms.sourceNode ?? vmi.status?.nodeName) !== host) return;
    if (!due(key, `${ms.migrationUid}/${step.step}`, step.delayMs)) return;
    if (step.step === 'target-domain-ready') {
      // The transfer is over: the source launcher's libvirt hook ("release end migrated") marks
      // its backend claim as the domain leaves, before the target reports the domain running.
      if (ms.sourcePersistentStatePVCName) opts.files?.write(namespace, ms.sourcePersistentStatePVCName, 'meta/migrated');
      if (targetLosses.delete(key)) {
        try {
          await api.core.deleteNamespacedPod({ namespace, name: ms.targetPod ?? '', body: { gracePeriodSeconds: 0 } });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        return;
      }
    }
    if (step.status || step.labels) await patchVmi(vmi, step);
    const address = ms.targetNodeAddress ?? '';
    if (step.step === 'prepare-target') {
      event(vmi, 'Normal', 'PreparingTarget', 'VirtualMachineInstance Migration Target Prepared.', targetNode);
      const advertised = (step.status?.['migrationState'] as { targetNodeAddress?: string } | undefined)?.targetNodeAddress ?? address;
      event(vmi, 'Normal', 'PreparingTarget', `Migration Target is listening at ${advertised}, on ports: 49152,49153`, targetNode);
    }
    if (step.step === 'start') event(vmi, 'Normal', 'Migrating', 'VirtualMachineInstance is migrating.', host);
    if (step.step === 'abort') event(vmi, 'Normal', 'Migrating', 'VirtualMachineInstance is aborting migration.', host);
    if (step.step === 'fail') event(vmi, 'Warning', 'Migrated', `VirtualMachineInstance migration uid ${ms.migrationUid ?? ''} failed. reason:${String((step.status?.['migrationState'] as { failureReason?: string } | undefined)?.failureReason ?? '')}`, host);
    if (step.step === 'complete') event(vmi, 'Normal', 'Migrated', `The VirtualMachineInstance migrated to node ${targetNode}.`, targetNode);
    if (step.step === 'fail') failures.delete(key);
    if (step.step === 'complete') memoryFailures.delete(key);
  };

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const vmi = vmis.get(namespace, name);
    if (!vmi) return;
    const phase = vmi.status?.phase;
    // The informer's selector: a VMI without the label is invisible to every handler.
    const host = vmi.metadata?.labels?.[NODE_NAME_LABEL];
    if (!host || !nodes.get('', host) || (phase !== 'Scheduled' && phase !== 'Running')) return;
    const node = nodes.get('', host);
    const ms = vmi.status?.migrationState;
    // The source found a hand-off with no target node: it cannot tell where the domain went.
    if (ms?.migrationUid && ms.sourceNode === host && !ms.targetNode && !ms.completed && opts.serves?.(host) !== false) {
      await finish(vmi, 'Failed', host, { migrationState: { completed: true, failed: true, endTimestamp: ms.endTimestamp ?? clock.isoNow() } });
      event(vmi, 'Warning', 'Migrated', 'The VirtualMachineInstance migrated to unknown host.', host);
      return;
    }
    if (activeMigration(vmi) && !ms?.completed && !vmi.metadata?.deletionTimestamp) return syncMigration(key, vmi, host);
    // A finished migration's label bookkeeping (the target's final cleanup) comes before anything
    // else: until then the label still names the source, whose launcher has ended.
    if (activeMigration(vmi) && ms?.completed) {
      const relabel = nextMigrationStep({ vmi, targetPod: undefined, nodeAddress: () => undefined, failWith: undefined, nowIso: clock.isoNow(), timings, targetInterfaces: () => [] });
      if (relabel?.labels) return patchVmi(vmi, relabel);
    }
    if (opts.serves?.(host) === false) return;
    if (vmi.metadata?.deletionTimestamp) {
      if (due(key, 'shutdown', shutdownMs)) {
        event(vmi, 'Normal', 'ShuttingDown', 'Signaled Graceful Shutdown', host);
        await finish(vmi, 'Succeeded', host);
      }
      return;
    }
    if (phase === 'Scheduled') return startVmi(key, vmi, host, node);
    return syncRunning(key, vmi, host, node);
  };

  const worker = new KeyWorker(
    async (key) => {
      try {
        await handle(key);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    { concurrency: 4, onError: (k, e) => opts.onError?.(`virt-handler ${k}`, e) },
  );
  await kubevirts.start();
  await trackers.start();
  await nodes.start();
  await pods.start();
  await vmis.start();

  return {
    failMigration(namespace, name, reason = 'Live migration failed (sandbox test hook)') {
      const key = namespace === '*' ? '*' : `${namespace}/${name}`;
      failures.set(key, reason);
      worker.add(key);
    },
    failMemoryHotplug(namespace, name) {
      memoryFailures.add(`${namespace}/${name}`);
    },
    loseTargetAfterTransfer(namespace, name) {
      targetLosses.add(`${namespace}/${name}`);
    },
    restarts: () => vmis.restarts + pods.restarts + nodes.restarts + kubevirts.restarts + trackers.restarts,
    async stop() {
      await worker.stop();
      for (const t of timers.values()) clock.clearTimeout(t);
      timers.clear();
      await Promise.all([vmis.stop(), pods.stop(), nodes.stop(), kubevirts.stop(), trackers.stop()]);
    },
  };
}
