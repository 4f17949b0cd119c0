/**
 * The sandbox's kubelets (one loop for every node): admit bound pods as the kubelet does
 * (device-manager and fit-predicate rejections, pod-admission.ts), keep a pod in ContainerCreating
 * while its volumes cannot be set up (pod-volumes.ts: claims, volume modes, ConfigMaps, Secrets,
 * Multi-Attach) with the kubelet's events, start the rest (Pending → Running after
 * `startupMs` on the clock), keep `Ready` in step with containers and readiness gates, complete virt-launcher pods
 * whose launcher would exit, run a claim-checking shell test to its exit code (pod-script.ts),
 * write Multus' network status on pods that ask for Multus networks (multus-status.ts) and
 * refresh it when a running pod's request changes, and finish graceful deletions — a pod with a
 * deletionTimestamp is removed at that time (the API server has already added the grace period)
 * with a final DELETE gracePeriodSeconds=0, or at once when it never started or already finished.
 */
import { KUBEVIRT, MERGE_PATCH, isNotFound, listAllPods, listAllVmis, listNodes, plain, type NodeSideApi } from './api.ts';
import { KeyWorker } from './key-worker.ts';
import { isLauncherPod, launcherExit, owningVmi } from './launcher-exit.ts';
import type { ClaimFiles } from './claim-files.ts';
import { containerExitedStatus, exitedStatus, finishedStatus, readyCondition, rejectedStatus, runningStatus, waitingStatus } from './pod-status.ts';
import { scriptExitCodes } from './pod-script.ts';
import { multusNetworkStatus, NETWORK_STATUS_ANNOTATION } from './multus-status.ts';
import type { Informer } from './shared-informers.ts';
import { admissionRejection } from './pod-admission.ts';
import { failedMountMessage, volumeProblems, volumesReady } from './pod-volumes.ts';
import { sourceKeysOf, volumeSources } from './volume-sources.ts';
import type { EventRecorder } from './events.ts';
import { conditionOf, isTerminalPhase, keyOf, splitKey, timeMs, type Node, type Pod, type Vmi } from './objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';

export interface KubeletOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from binding to containers running; default 1000. */
  startupMs?: number;
  /** Claim contents, for the programs this kubelet runs to completion (pod-script.ts). */
  files?: ClaimFiles;
  /** Where the kubelet's events go (FailedMount, admission rejections); none when absent. */
  events?: EventRecorder;
  onError?: (what: string, err: unknown) => void;
}

/** The kubelet's volume wait: re-tried with backoff up to its 2 min 3 s (`podAttachAndMountTimeout`). */
const VOLUME_RETRY_MAX_MS = 123_000;

/** A running kubelet fleet; see {@link startKubelet}. */
export interface Kubelet {
  /** Test hook: make a running pod's containers exit (Succeeded = exit 0, Failed = exit 1). */
  finishPod(namespace: string, name: string, phase: 'Succeeded' | 'Failed', reason?: string): Promise<void>;
  /** Test hook: one container of a running pod exits with `exitCode`; the others run on. */
  exitContainer(namespace: string, name: string, container: string, exitCode: number): Promise<void>;
  restarts(): number;
  stop(): Promise<void>;
}

export async function startKubelet(opts: KubeletOptions): Promise<Kubelet> {
  const { api, clock } = opts;
  const startupMs = opts.startupMs ?? 1000;
  const timers = new Map<string, { uid: string; timer: ClockTimer }>();
  const ipCounters = new Map<string, number>();
  const podIps = new Map<string, string>();
  const startAts = new Map<string, number>();
  // Pods this kubelet admitted (by uid): what later admissions on the node count as used.
  const admitted = new Set<string>();
  // Pods whose volumes are not ready: how often they were re-checked (the retry backoff).
  const volumeRetries = new Map<string, number>();

  const wakeAt = (key: string, uid: string, atMs: number) => {
    const existing = timers.get(key);
    if (existing && existing.uid === uid && existing.timer.dueMs <= atMs) return;
    clock.clearTimeout(existing?.timer);
    const timer = clock.setTimeout(() => {
      timers.delete(key);
      worker.add(key);
    }, atMs - clock.nowMs());
    timers.set(key, { uid, timer });
  };

  const pods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    list: listAllPods(api),
    onError: (e) => opts.onError?.('kubelet pod informer', e),
    onEvent: (event, pod) => {
      worker.add(keyOf(pod));
      const uid = pod.metadata?.uid ?? '';
      if (event === 'delete') {
        admitted.delete(uid);
        volumeRetries.delete(uid);
      }
      // A pod that ends or goes releases its exclusive volumes: pods waiting on them look again.
      if (event === 'delete' || isTerminalPhase(pod.status?.phase)) {
        for (const k of sourceKeysOf(pod)) if (k.startsWith('claim:')) for (const p of pods.byIndex('source', k)) if (p !== pod) worker.add(keyOf(p));
      }
    },
    // What VMI, node and volume-source events wake: found by index, not by a scan of every pod.
    indexes: {
      vmi: (p) => {
        const uid = owningVmi(p)?.uid;
        return uid ? [uid] : [];
      },
      node: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []),
      source: sourceKeysOf,
    },
  });
  const nodes: Informer<Node> = api.informers.informer<Node>({
    path: '/api/v1/nodes',
    list: listNodes(api),
    onError: (e) => opts.onError?.('kubelet node informer', e),
    onEvent: (event, node) => {
      if (event === 'delete') return;
      const name = node.metadata?.name;
      for (const p of pods.byIndex('node', name ?? '')) worker.add(keyOf(p));
    },
  });
  // Launcher pods end when their VMI ends or migrates away, so VMI changes wake their pods.
  const vmis: Informer<Vmi> = api.informers.informer<Vmi>({
    path: '/apis/kubevirt.io/v1/virtualmachineinstances',
    list: listAllVmis(api),
    onError: (e) => opts.onError?.('kubelet vmi informer', e),
    onEvent: (_event, vmi) => {
      const uid = vmi.metadata?.uid;
      for (const p of pods.byIndex('vmi', uid ?? '')) worker.add(keyOf(p));
    },
  });

  // Claims, PVs, ConfigMaps and Secrets: a pod waiting on one is looked at again when it changes.
  const sources = volumeSources(api, pods, (p) => worker.add(keyOf(p)), opts.onError);
  const record = (pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string, component = 'kubelet') =>
    opts.events?.record({ ...pod, kind: 'Pod', apiVersion: 'v1' }, type, reason, message, { component, ...(component === 'kubelet' ? { host: pod.spec?.nodeName ?? '' } : {}) });

  const hostIpOf = (node: Node) => node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
  const podIpFor = (pod: Pod, nodeName: string) => {
    const uid = pod.metadata?.uid ?? keyOf(pod);
    const known = podIps.get(uid);
    if (known) return known;
    const n = ((ipCounters.get(nodeName) ?? 1) % 253) + 1;
    ipCounters.set(nodeName, n);
    const nodeIndex = Number(/(\d+)$/.exec(nodeName)?.[1] ?? '0') % 256;
    const ip = `10.244.${nodeIndex}.${n}`;
    podIps.set(uid, ip);
    return ip;
  };

  /** The launcher's VMI, read from the API when the cache does not have it: an informer that
   * lags behind must never make us kill a launcher whose VMI exists. */
  const vmiOf = async (pod: Pod): Promise<Vmi | undefined> => {
    const owner = owningVmi(pod);
    if (!owner) return undefined;
    const ns = pod.metadata?.namespace ?? '';
    const cached = vmis.get(ns, owner.name);
    if (cached?.metadata?.uid === owner.uid) return cached;
    try {
      const vmi = (await api.custom.getNamespacedCustomObject({ ...KUBEVIRT, namespace: ns, plural: 'virtualmachineinstances', name: owner.name })) as Vmi;
      return vmi.metadata?.uid === owner.uid ? vmi : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const patchStatus = async (pod: Pod, status: Record<string, unknown>) => {
    const { namespace = '', name = '', resourceVersion } = pod.metadata ?? {};
    // The resourceVersion precondition makes a stale cache answer 409 (retried once the watch
    // catches up) instead of our conditions list replacing one written meanwhile.
    try {
      await api.core.patchNamespacedPodStatus(
        { namespace, name, body: { metadata: { resourceVersion }, status } },
        MERGE_PATCH,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  /** Sets one annotation; answers the pod as written (its new resourceVersion), or undefined when it is gone. */
  const annotate = async (pod: Pod, key: string, value: string): Promise<Pod | undefined> => {
    const { namespace = '', name = '' } = pod.metadata ?? {};
    try {
      return plain<Pod>(await api.core.patchNamespacedPod({ namespace, name, body: { metadata: { annotations: { [key]: value } } } }, MERGE_PATCH));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const finalDelete = async (pod: Pod) => {
    const { namespace = '', name = '', uid } = pod.metadata ?? {};
    try {
      // In the body: kube-apiserver ignores the query's gracePeriodSeconds when a body is sent.
      await api.core.deleteNamespacedPod({ namespace, name, body: { gracePeriodSeconds: 0, preconditions: { uid } } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  /**
   * Admission, once per pod (pod-admission.ts): a pod the kubelet cannot admit is Failed with the
   * reason and a Warning event; admitted pods count against what the next ones may use.
   */
  const admit = (pod: Pod, node: Node): boolean => {
    const uid = pod.metadata?.uid ?? '';
    if (admitted.has(uid)) return true;
    const name = node.metadata?.name ?? '';
    const others = pods.byIndex('node', name).filter((p) => p.metadata?.uid !== uid && !isTerminalPhase(p.status?.phase) && (admitted.has(p.metadata?.uid ?? '') || p.status?.phase === 'Running'));
    const rejection = admissionRejection(pod, node, others);
    if (!rejection) {
      admitted.add(uid);
      return true;
    }
    record(pod, 'Warning', rejection.reason, rejection.message);
    patchStatus(pod, rejectedStatus(rejection.reason, rejection.message)).catch((e: unknown) => opts.onError?.(`kubelet reject ${keyOf(pod)}`, e));
    return false;
  };

  /**
   * The volume manager's wait (pod-volumes.ts): true once every volume can be set up; otherwise the
   * kubelet's and the attach/detach controller's events, the pod shown in ContainerCreating, and a
   * re-check with backoff (sooner when a source changes).
   */
  const volumesSetUp = async (key: string, pod: Pod, node: Node): Promise<boolean> => {
    const uid = pod.metadata?.uid ?? '';
    const problems = volumeProblems(pod, node.metadata?.name ?? '', sources.lookups);
    if (volumesReady(problems)) {
      volumeRetries.delete(uid);
      return true;
    }
    if (problems.process.length > 0) record(pod, 'Warning', 'FailedMount', failedMountMessage(problems));
    for (const e of problems.setup) record(pod, 'Warning', 'FailedMount', e.message);
    for (const e of problems.attach) record(pod, 'Warning', 'FailedAttachVolume', e.message, 'attachdetach-controller');
    const tries = (volumeRetries.get(uid) ?? 0) + 1;
    volumeRetries.set(uid, tries);
    wakeAt(key, uid, clock.nowMs() + Math.min(VOLUME_RETRY_MAX_MS, 500 * 2 ** Math.min(tries, 12)));
    if (pod.status?.containerStatuses?.[0]?.state?.waiting === undefined) await patchStatus(pod, waitingStatus(pod, hostIpOf(node), 'ContainerCreating', clock.isoNow()));
    return false;
  };

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const pod = pods.get(namespace, name);
    if (!pod) {
      clock.clearTimeout(timers.get(key)?.timer);
      timers.delete(key);
      return;
    }
    const uid = pod.metadata?.uid ?? '';
    const nodeName = pod.spec?.nodeName;
    const node = nodeName ? nodes.get('', nodeName) : undefined;
    const phase = pod.status?.phase;
    const deletion = timeMs(pod.metadata?.deletionTimestamp);
    if (deletion !== undefined) {
      // Nothing runs (never started, or already finished): the kubelet removes it right away.
      if (!node || isTerminalPhase(phase) || phase === 'Pending') return finalDelete(pod);
      if (clock.nowMs() >= deletion) return finalDelete(pod);
      wakeAt(key, uid, deletion);
    }
    if (!node || isTerminalPhase(phase)) return;
    if (phase === 'Pending' || phase === undefined) {
      if (deletion !== undefined) return;
      if (!admit(pod, node)) return;
      if (!(await volumesSetUp(key, pod, node))) return;
      // Containers take startupMs (simulated) from the moment this kubelet first sees the pod bound.
      let startAt = startAts.get(uid);
      if (startAt === undefined) startAts.set(uid, (startAt = clock.nowMs() + startupMs));
      if (clock.nowMs() < startAt) return wakeAt(key, uid, startAt);
      startAts.delete(uid);
      const podIP = podIpFor(pod, node.metadata?.name ?? '');
      // Multus attaches the requested networks while the sandbox is set up, before containers start.
      const networkStatus = multusNetworkStatus(pod, podIP);
      const current = networkStatus !== undefined && pod.metadata?.annotations?.[NETWORK_STATUS_ANNOTATION] !== networkStatus ? await annotate(pod, NETWORK_STATUS_ANNOTATION, networkStatus) : pod;
      if (!current) return;
      return patchStatus(current, runningStatus(current, podIP, hostIpOf(node), clock.isoNow()));
    }
    if (phase !== 'Running') return;
    if (isLauncherPod(pod)) {
      const exit = launcherExit(pod, await vmiOf(pod));
      if (exit) return patchStatus(pod, finishedStatus(pod, exit.phase, exit.reason, clock.isoNow()));
    } else if (opts.files && deletion === undefined) {
      // A program that looks at a claim and exits (a recovery Job's check) ends the pod at once.
      const codes = scriptExitCodes(pod, opts.files);
      if (codes) return patchStatus(pod, exitedStatus(pod, codes, clock.isoNow()));
    }
    // Multus' dynamic-networks controller: a running pod whose networks annotation changed (a NIC
    // hot-plug or unplug) gets the attachments it now asks for, and its network status says so.
    const podIP = pod.status?.podIP;
    const networkStatus = podIP ? multusNetworkStatus(pod, podIP) : undefined;
    if (networkStatus !== undefined && pod.metadata?.annotations?.[NETWORK_STATUS_ANNOTATION] !== networkStatus) {
      await annotate(pod, NETWORK_STATUS_ANNOTATION, networkStatus);
      return;
    }
    // Readiness gates are set by others (the VMI controller); Ready follows them and the containers.
    const conds = pod.status?.conditions ?? [];
    const unready = (pod.status?.containerStatuses ?? []).filter((c) => c.ready !== true).map((c) => c.name);
    const ready = readyCondition(pod, conds, unready, clock.isoNow());
    const current = conditionOf(conds, 'Ready');
    if (current?.status !== ready.status || current.reason !== ready.reason) {
      await patchStatus(pod, { conditions: conds.filter((c) => c.type !== 'Ready').concat(ready) });
    }
  };

  const worker = new KeyWorker(handle, { concurrency: 4, onError: (k, e) => opts.onError?.(`kubelet ${k}`, e) });
  await nodes.start();
  await vmis.start();
  await pods.start();
  await sources.start();

  return {
    async finishPod(namespace, name, phase, reason) {
      const pod = plain<Pod>(await api.core.readNamespacedPod({ namespace, name }));
      await patchStatus(pod, finishedStatus(pod, phase, reason ?? (phase === 'Succeeded' ? 'Completed' : 'Error'), clock.isoNow()));
    },
    async exitContainer(namespace, name, container, exitCode) {
      const pod = plain<Pod>(await api.core.readNamespacedPod({ namespace, name }));
      await patchStatus(pod, containerExitedStatus(pod, container, exitCode, clock.isoNow()));
    },
    restarts: () => pods.restarts + nodes.restarts + vmis.restarts + sources.restarts(),
    async stop() {
      await worker.stop();
      for (const t of timers.values()) clock.clearTimeout(t.timer);
      timers.clear();
      await Promise.all([pods.stop(), nodes.stop(), vmis.stop(), sources.stop()]);
    },
  };
}
