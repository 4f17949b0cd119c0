/**
 * virt-handler as KubeVirt runs it, seen from the API: a DaemonSet in the `kubevirt` namespace,
 * one pod per node, and each node's heartbeat (annotation `kubevirt.io/heartbeat`, label
 * `kubevirt.io/schedulable`) patched every minute, jittered, on the sandbox clock. The VMI side of
 * virt-handler (boot, shutdown, migrations) is `../nodes/virt-handler.ts`; it asks {@link
 * VirtHandlerFleet.serves} whether a node's handler is up.
 *
 * Fault injection: {@link VirtHandlerFleet.stopHandler} stops one node's virt-handler the way a
 * crash does — no more heartbeats, no goodbye patch, its VMIs no longer looked after — so the
 * node controller sees the heartbeat go stale after five minutes.
 *
 * On the emulator there is no DaemonSet controller, so this plays it (pods and status counts);
 * on the real control plane kube-controller-manager does that (`emulateDaemonSetController: false`).
 */
import { AppsV1Api } from '@kubernetes/client-node';
import { pooledApiClient } from '../../shared/kube/connections.ts';
import { MERGE_PATCH, isNotFound, listAllPods, listNodes, statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { KeyWorker } from '../nodes/key-worker.ts';
import type { Informer } from '../nodes/shared-informers.ts';
import type { Node, Pod } from '../nodes/objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';
import { heartbeatPatch, nextBeatDelayMs } from './heartbeat.ts';
import { KUBEVIRT_NAMESPACE, VIRT_HANDLER, VIRT_HANDLER_SELECTOR, daemonSetCounts, virtHandlerDaemonSet, virtHandlerPod } from './virt-handler-daemonset.ts';

export const DEFAULT_VIRT_HANDLER_IMAGE = 'quay.io/kubevirt/virt-handler:v1.9.0';

export interface VirtHandlerFleetOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Create the handler pods and DaemonSet status ourselves; default true (the emulator has no DaemonSet controller). */
  emulateDaemonSetController?: boolean;
  image?: string;
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
  onError?: (what: string, err: unknown) => void;
}

/** The running fleet; see the module comment. */
export interface VirtHandlerFleet {
  /** False while the node's virt-handler is stopped (or the node is unknown). */
  serves(nodeName: string): boolean;
  /** Fault: the node's virt-handler stops, as a crash does (no more heartbeats). */
  stopHandler(nodeName: string): void;
  /** Brings a stopped virt-handler back: it beats at once, then every minute. */
  startHandler(nodeName: string): Promise<void>;
  /** Test hook: one heartbeat of `nodeName` now. */
  beat(nodeName: string): Promise<void>;
  stop(): Promise<void>;
}

const DS_PATH = `/apis/apps/v1/namespaces/${KUBEVIRT_NAMESPACE}/daemonsets/${VIRT_HANDLER}`;

export async function startVirtHandlerFleet(opts: VirtHandlerFleetOptions): Promise<VirtHandlerFleet> {
  const { api, clock } = opts;
  const image = opts.image ?? DEFAULT_VIRT_HANDLER_IMAGE;
  const random = opts.random ?? Math.random;
  const emulateDs = opts.emulateDaemonSetController ?? true;
  const apps = pooledApiClient(api.kc, AppsV1Api);
  const stopped = new Set<string>();
  const timers = new Map<string, ClockTimer>();
  let closing = false;

  const beat = async (nodeName: string) => {
    try {
      await api.core.patchNode({ name: nodeName, body: heartbeatPatch(clock.isoNow()) }, MERGE_PATCH);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
  // Sliding: the next beat is planned once this one has finished, like wait.JitterUntil(sliding).
  const schedule = (nodeName: string) => {
    clock.clearTimeout(timers.get(nodeName));
    if (closing || stopped.has(nodeName)) return;
    timers.set(nodeName, clock.setTimeout(() => {
      timers.delete(nodeName);
      if (closing || stopped.has(nodeName) || !nodes.get('', nodeName)) return;
      beat(nodeName)
        .catch((e: unknown) => opts.onError?.(`virt-handler heartbeat ${nodeName}`, e))
        .finally(() => schedule(nodeName));
    }, nextBeatDelayMs(random())));
  };

  let dsUid: string | undefined;
  const ensureDaemonSet = async (): Promise<string> => {
    const body = virtHandlerDaemonSet(image);
    try {
      const created = (await apps.createNamespacedDaemonSet({ namespace: KUBEVIRT_NAMESPACE, body: body as never })) as { metadata?: { uid?: string } };
      return created.metadata?.uid ?? '';
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw err;
      const existing = await apps.readNamespacedDaemonSet({ namespace: KUBEVIRT_NAMESPACE, name: VIRT_HANDLER });
      return existing.metadata?.uid ?? '';
    }
  };

  // The DaemonSet controller's part: a pod on every node, and the status counts.
  const syncDaemonSet = async () => {
    if (!emulateDs || dsUid === undefined) return;
    const nodeNames = nodes.list().map((n) => n.metadata?.name ?? '').filter(Boolean);
    for (const nodeName of nodeNames) {
      if (handlerPods.list(KUBEVIRT_NAMESPACE).some((p) => p.spec?.nodeName === nodeName)) continue;
      try {
        await api.core.createNamespacedPod({ namespace: KUBEVIRT_NAMESPACE, body: virtHandlerPod(nodeName, image, { uid: dsUid }) as never });
      } catch (err) {
        if (statusCodeOf(err) !== 409) throw err;
      }
    }
    const status = daemonSetCounts(nodeNames, handlerPods.list(KUBEVIRT_NAMESPACE));
    await apps.patchNamespacedDaemonSetStatus(
      { namespace: KUBEVIRT_NAMESPACE, name: VIRT_HANDLER, body: { status: { ...status, observedGeneration: 1 } } },
      MERGE_PATCH,
    );
  };
  const worker = new KeyWorker(async () => syncDaemonSet(), { concurrency: 1, onError: (_k, e) => opts.onError?.('virt-handler daemonset', e) });

  const nodes: Informer<Node> = api.informers.informer<Node>({
    path: '/api/v1/nodes',
    list: listNodes(api),
    onError: (e) => opts.onError?.('virt-handler fleet node informer', e),
    onEvent: (event, node) => {
      const name = node.metadata?.name ?? '';
      if (event === 'delete') {
        clock.clearTimeout(timers.get(name));
        timers.delete(name);
      } else if (event === 'add' && !timers.has(name)) {
        schedule(name);
      }
      worker.add(DS_PATH);
    },
  });
  const handlerPods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    labelSelector: VIRT_HANDLER_SELECTOR,
    list: listAllPods(api, VIRT_HANDLER_SELECTOR),
    onError: (e) => opts.onError?.('virt-handler fleet pod informer', e),
    onEvent: () => worker.add(DS_PATH),
  });

  // The DaemonSet exists on both control planes (virt-operator creates it); only its pods and
  // status are ours to play when there is no DaemonSet controller.
  dsUid = await ensureDaemonSet();
  await handlerPods.start();
  await nodes.start();
  worker.add(DS_PATH);

  return {
    serves: (nodeName) => !stopped.has(nodeName),
    stopHandler(nodeName) {
      stopped.add(nodeName);
      clock.clearTimeout(timers.get(nodeName));
      timers.delete(nodeName);
    },
    async startHandler(nodeName) {
      stopped.delete(nodeName);
      await beat(nodeName);
      schedule(nodeName);
    },
    beat,
    async stop() {
      closing = true;
      for (const t of timers.values()) clock.clearTimeout(t);
      timers.clear();
      await worker.stop();
      await Promise.all([nodes.stop(), handlerPods.stop()]);
    },
  };
}
