/**
 * The sandbox's virt-handler (one loop for every node): takes over a VMI once the VMI controller
 * has handed it off (phase Scheduled, status.nodeName set — reference §a.4) and boots it to
 * Running; shuts a deleted VMI down (Succeeded); reports a VMI Failed/Succeeded when its launcher
 * pod ends; moves hotplugged volumes through virt-handler's phases (hotplug-volumes.ts), plugs and
 * unplugs NICs (nic-hotplug.ts); and
 * executes handed-off migrations step by step ({@link nextMigrationStep}), ending
 * with status.nodeName on the target (when the transfer ends, the source launcher's libvirt hook
 * marks its backend claim `meta/migrated` in the sandbox's claim files). Durations are simulated ms on the sandbox clock.
 */
import { KUBEVIRT, MERGE_PATCH, isNotFound, listAllPods, listAllVmis, listNodes, type NodeSideApi } from './api.ts';
import { KeyWorker } from './key-worker.ts';
import { isLauncherPod, owningVmi } from './launcher-exit.ts';
import { DEFAULT_MIGRATION_TIMINGS, activeMigration, nextMigrationStep, type MigrationTimings } from './migration-steps.ts';
import { interfacesOf, runningVmiStatus } from './vmi-running-status.ts';
import { nextHotplugVolumeStatus } from './hotplug-volumes.ts';
import { nextInterfaceStatus } from './nic-hotplug.ts';
import type { Informer } from './shared-informers.ts';
import type { ClaimFiles } from './claim-files.ts';
import { isTerminalPhase, keyOf, splitKey, timeMs, type Node, type Pod, type Vmi } from './objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';

export interface VirtHandlerOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from hand-off (Scheduled) to Running; default 1000. */
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

  const vmis: Informer<Vmi> = api.informers.informer<Vmi>({
    path: '/apis/kubevirt.io/v1/virtualmachineinstances',
    list: listAllVmis(api),
    onError: (e) => opts.onError?.('virt-handler vmi informer', e),
    onEvent: (event, vmi) => {
      if (event === 'delete') forget(keyOf(vmi));
      worker.add(keyOf(vmi));
    },
  });
  // Launcher pods only, picked out of the node side's one pod watch (the kubelet's and the
  // scheduler's) rather than a watch of their own: each pod event is then parsed once here.
  const pods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    where: isLauncherPod,
    list: listAllPods(api),
    onError: (e) => opts.onError?.('virt-handler pod informer', e),
    onEvent: (_event, pod) => {
      const owner = owningVmi(pod);
      if (owner) worker.add(`${pod.metadata?.namespace ?? ''}/${owner.name}`);
    },
    // A VMI's launcher pods by its uid, not by a scan of every launcher pod.
    indexes: {
      vmi: (p) => {
        const uid = owningVmi(p)?.uid;
        return uid ? [uid] : [];
      },
    },
  });
  const nodes: Informer<Node> = api.informers.informer<Node>({
    path: '/api/v1/nodes',
    list: listNodes(api),
    onError: (e) => opts.onError?.('virt-handler node informer', e),
    onEvent: () => undefined,
  });

  function forget(key: string) {
    for (const k of [...since.keys()]) if (k.startsWith(`${key}#`)) since.delete(k);
    clock.clearTimeout(timers.get(key));
    timers.delete(key);
  }

  /** True once `delayMs` simulated ms have passed since `step` first became due; else arms a wake-up. */
  const due = (key: string, step: string, delayMs: number): boolean => {
    const id = `${key}#${step}`;
    let start = since.get(id);
    if (start === undefined) since.set(id, (start = clock.nowMs()));
    const at = start + delayMs;
    if (clock.nowMs() >= at) {
      since.delete(id);
      return true;
    }
    const existing = timers.get(key);
    if (!existing || existing.dueMs > at) {
      clock.clearTimeout(existing);
      timers.set(key, clock.setTimeout(() => {
        timers.delete(key);
        worker.add(key);
      }, at - clock.nowMs()));
    }
    return false;
  };

  const launcherOn = (vmi: Vmi, nodeName: string | undefined): Pod | undefined =>
    pods
      .byIndex('vmi', vmi.metadata?.uid ?? '')
      .filter((p) => p.spec?.nodeName === nodeName)
      .sort((a, b) => (timeMs(b.metadata?.creationTimestamp) ?? 0) - (timeMs(a.metadata?.creationTimestamp) ?? 0))[0];

  // VMIs have no status subresource (as in KubeVirt): status and labels go in one merge patch on
  // the object itself. resourceVersion precondition: a decision taken on a stale cache must not
  // land (409, retried).
  const patchVmi = async (vmi: Vmi, change: { status?: Record<string, unknown>; labels?: Record<string, string | null> }) => {
    const { namespace = '', name = '', resourceVersion } = vmi.metadata ?? {};
    const body = { metadata: { resourceVersion, ...(change.labels ? { labels: change.labels } : {}) }, ...(change.status ? { status: change.status } : {}) };
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace, name, body }, MERGE_PATCH);
  };
  const patchStatus = (vmi: Vmi, status: Record<string, unknown>) => patchVmi(vmi, { status });

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const vmi = vmis.get(namespace, name);
    if (!vmi) return;
    const phase = vmi.status?.phase;
    const nodeName = vmi.status?.nodeName;
    if (!nodeName || !nodes.get('', nodeName) || opts.serves?.(nodeName) === false || (phase !== 'Scheduled' && phase !== 'Running')) return;
    const now = clock.isoNow();
    const transitions = (vmi.status?.phaseTransitionTimestamps ?? []) as unknown[];
    const finalStatus = (p: 'Succeeded' | 'Failed', reason?: string) => ({
      phase: p,
      ...(reason ? { reason } : {}),
      phaseTransitionTimestamps: [...transitions, { phase: p, phaseTransitionTimestamp: now }],
    });

    if (vmi.metadata?.deletionTimestamp) {
      if (due(key, 'shutdown', shutdownMs)) await patchStatus(vmi, finalStatus('Succeeded'));
      return;
    }
    const launcher = launcherOn(vmi, nodeName);
    if (phase === 'Scheduled') {
      // The launcher died before the domain came up (a crash-looping guest): the VMI fails
      // without ever having run. The VMI controller cannot tell, since the ended pod still exists.
      if (launcher && isTerminalPhase(launcher.status?.phase)) {
        await patchStatus(vmi, finalStatus('Failed', 'PodFailed'));
        return;
      }
      if (launcher?.status?.phase !== 'Running') return;
      if (due(key, 'boot', bootMs)) await patchStatus(vmi, runningVmiStatus(vmi, launcher, now));
      return;
    }
    // Running. A launcher that ended while no migration moves the domain ends the VMI.
    if (!activeMigration(vmi) || vmi.status?.migrationState?.completed) {
      if (launcher && isTerminalPhase(launcher.status?.phase)) {
        const failed = launcher.status?.phase === 'Failed';
        await patchStatus(vmi, finalStatus(failed ? 'Failed' : 'Succeeded', failed ? 'PodFailed' : undefined));
        return;
      }
    }
    const ms = activeMigration(vmi);
    // Hotplugged volumes: mounted once their attachment pod is ready, attached, unmounted when
    // unplugged — also after a migration, once its last bookkeeping step is done.
    const hotplug = async () => {
      const volumeStatus = nextHotplugVolumeStatus(vmi, now);
      const step = volumeStatus?.map((s) => `${s.name}=${s.phase ?? ''}`).join(',');
      // Hotplugged NICs: attached once the pod has them, detached when absent (nic-hotplug.ts).
      const interfaces = nextInterfaceStatus(vmi);
      const nicStep = interfaces?.map((s) => `${s.name ?? ''}=${s.infoSource ?? ''}`).join(',');
      const volumesDue = volumeStatus !== undefined && due(key, `hotplug/${step ?? ''}`, hotplugMs);
      const nicsDue = interfaces !== undefined && due(key, `nic/${nicStep ?? ''}`, hotplugMs);
      if (volumesDue || nicsDue) await patchStatus(vmi, { ...(volumesDue ? { volumeStatus } : {}), ...(nicsDue ? { interfaces } : {}) });
    };
    if (!ms) return hotplug();
    const targetPod = pods.get(namespace, ms.targetPod ?? '');
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
    if (!step && ms.completed) return hotplug();
    if (!step || !due(key, `${ms.migrationUid}/${step.step}`, step.delayMs)) return;
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
    if (step.step === 'fail') failures.delete(key);
    if (step.step === 'complete') memoryFailures.delete(key);
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
    restarts: () => vmis.restarts + pods.restarts + nodes.restarts,
    async stop() {
      await worker.stop();
      for (const t of timers.values()) clock.clearTimeout(t);
      timers.clear();
      await Promise.all([vmis.stop(), pods.stop(), nodes.stop()]);
    },
  };
}
