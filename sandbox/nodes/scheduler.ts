/**
 * The sandbox's kube-scheduler: binds pending pods that name no scheduler or `default-scheduler`
 * to a node chosen by {@link placePod}, sets `PodScheduled`, and reports `Unschedulable` pods with
 * a message like the real one. Unschedulable pods are retried whenever a node or a bound pod
 * changes, because that is when room can appear.
 */
import { JSON_PATCH, MERGE_PATCH, isNotFound, listAllPods, listNodes, statusCodeOf, type NodeSideApi } from './api.ts';
import { setConditionOps } from './conditions-patch.ts';
import { KeyWorker } from './key-worker.ts';
import { PlacedIndex, placePod } from './placement.ts';
import type { Informer } from './shared-informers.ts';
import { preFilterMessage, SELECTED_NODE_ANNOTATION, volumeDecision, type BindingModeOf, type ClaimView } from './volume-binding.ts';
import { conditionOf, isTerminalPhase, keyOf, splitKey, type Node, type Pod } from './objects.ts';
import type { Clock } from '../clock.ts';

export interface SchedulerOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Scheduler names we serve; default `default-scheduler` (and pods that name none). */
  schedulerName?: string;
  onError?: (what: string, err: unknown) => void;
}

/** A running scheduler; see {@link startScheduler}. */
export interface Scheduler {
  /** Informer restarts so far (watch drops survived). */
  restarts(): number;
  stop(): Promise<void>;
}

/** Starts the scheduler; resolves once its caches have listed. */
export async function startScheduler(opts: SchedulerOptions): Promise<Scheduler> {
  const { api, clock } = opts;
  const myName = opts.schedulerName ?? 'default-scheduler';
  // Pods we bound whose binding the cache has not shown yet: they must count against capacity
  // and anti-affinity, or two pods scheduled back to back could land on the same full node.
  const assumed = new Map<string, { uid: string; nodeName: string }>();
  const unschedulable = new Set<string>();
  let bindingSupported = true;
  // The placed pods by node (bound, or assumed), kept up to date per pod event and per assume.
  const placed = new PlacedIndex();
  const track = (pod: Pod) => {
    const key = keyOf(pod);
    placed.set(key, pod, isTerminalPhase(pod.status?.phase) ? undefined : (pod.spec?.nodeName ?? assumed.get(key)?.nodeName));
  };

  const isOurs = (pod: Pod) => (pod.spec?.schedulerName ?? myName) === myName;
  const needsScheduling = (pod: Pod) =>
    isOurs(pod) && !pod.spec?.nodeName && !pod.metadata?.deletionTimestamp && !isTerminalPhase(pod.status?.phase);

  const retryUnschedulable = () => {
    for (const k of unschedulable) worker.add(k);
  };

  const pods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    list: listAllPods(api),
    onError: (e) => opts.onError?.('scheduler pod informer', e),
    onEvent: (event, pod) => {
      const key = keyOf(pod);
      const a = assumed.get(key);
      if (a && (event === 'delete' || pod.metadata?.uid !== a.uid || pod.spec?.nodeName)) assumed.delete(key);
      if (event === 'delete') placed.delete(key);
      else track(pod);
      if (event === 'delete') {
        unschedulable.delete(key);
        retryUnschedulable();
        return;
      }
      if (pod.spec?.nodeName || isTerminalPhase(pod.status?.phase)) retryUnschedulable();
      worker.add(key);
    },
  });
  const nodes: Informer<Node> = api.informers.informer<Node>({
    path: '/api/v1/nodes',
    list: listNodes(api),
    onError: (e) => opts.onError?.('scheduler node informer', e),
    onEvent: () => retryUnschedulable(),
  });

  // Claims and classes, for the volume-binding step (volume-binding.ts).
  const claims: Informer<ClaimView & Pod> = api.informers.informer<ClaimView & Pod>({
    path: '/api/v1/persistentvolumeclaims',
    list: async () => (await api.core.listPersistentVolumeClaimForAllNamespaces()) as never,
    onError: (e) => opts.onError?.('scheduler claim informer', e),
    onEvent: () => retryUnschedulable(),
  });
  const classes: Informer<Pod & { volumeBindingMode?: string }> = api.informers.informer<Pod & { volumeBindingMode?: string }>({
    path: '/apis/storage.k8s.io/v1/storageclasses',
    list: async () => (await api.custom.listClusterCustomObject({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses' })) as never,
    onError: (e) => opts.onError?.('scheduler storage class informer', e),
    onEvent: () => retryUnschedulable(),
  });
  const modeOf: BindingModeOf = (name) => {
    const sc = name ? classes.get('', name) : classes.list().find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
    return sc?.volumeBindingMode === 'WaitForFirstConsumer' ? 'WaitForFirstConsumer' : 'Immediate';
  };

  // A relist replaces the cache without an event per pod: the index is rebuilt from it then.
  let indexedRestarts = -1;
  const placedIndex = (): PlacedIndex => {
    if (pods.restarts !== indexedRestarts) {
      indexedRestarts = pods.restarts;
      placed.clear();
      for (const p of pods.list()) track(p);
    }
    return placed;
  };

  const bind = async (pod: Pod, nodeName: string) => {
    const { namespace = '', name = '' } = pod.metadata ?? {};
    if (bindingSupported) {
      try {
        await api.core.createNamespacedPodBinding({
          namespace,
          name,
          body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
        });
        return;
      } catch (err) {
        const code = statusCodeOf(err);
        if (code !== 404 && code !== 405) throw err;
      }
    }
    // 404 from pods/binding is either "no binding subresource" or "pod gone": the update tells
    // which (a 404 here means gone, and binding stays the preferred way).
    await api.core.patchNamespacedPod({ namespace, name, body: { spec: { nodeName } } }, MERGE_PATCH);
    bindingSupported = false;
  };

  const patchCondition = async (pod: Pod, status: 'True' | 'False', reason?: string, message?: string) => {
    const ops = setConditionOps(pod.status?.conditions, {
      type: 'PodScheduled',
      status,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      lastProbeTime: null,
      lastTransitionTime: clock.isoNow(),
    });
    if (ops.length === 0) return;
    const { namespace = '', name = '' } = pod.metadata ?? {};
    await api.core.patchNamespacedPodStatus({ namespace, name, body: ops }, JSON_PATCH);
  };

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const pod = pods.get(namespace, name);
    if (!pod) return;
    if (pod.spec?.nodeName) {
      unschedulable.delete(key);
      // The binding subresource sets PodScheduled itself on a real server; make sure it is there.
      if (isOurs(pod) && !isTerminalPhase(pod.status?.phase) && conditionOf(pod.status?.conditions, 'PodScheduled')?.status !== 'True') {
        await patchCondition(pod, 'True');
      }
      return;
    }
    if (!needsScheduling(pod) || assumed.has(key)) return;
    const volumes = volumeDecision(pod, (n) => claims.get(namespace, n), modeOf);
    if (volumes.kind === 'unschedulable') {
      unschedulable.add(key);
      await patchCondition(pod, 'False', 'Unschedulable', preFilterMessage(nodes.list().length, volumes.message));
      return;
    }
    const pinnedTo = volumes.kind === 'ready' ? volumes.node : volumes.pinned;
    const candidates = pinnedTo ? nodes.list().filter((n) => n.metadata?.name === pinnedTo) : nodes.list();
    const placement = placePod(pod, candidates, placedIndex());
    if (placement.nodeName === undefined) {
      unschedulable.add(key);
      await patchCondition(pod, 'False', 'Unschedulable', placement.message);
      return;
    }
    if (volumes.kind === 'select-node') {
      // WaitForFirstConsumer: the provisioner makes the volume on the chosen node; the pod is
      // bound once its claims are (a claim event retries it).
      unschedulable.add(key);
      for (const claim of volumes.claims) {
        await api.core.patchNamespacedPersistentVolumeClaim({ namespace, name: claim, body: { metadata: { annotations: { [SELECTED_NODE_ANNOTATION]: placement.nodeName } } } }, MERGE_PATCH);
      }
      return;
    }
    unschedulable.delete(key);
    assumed.set(key, { uid: pod.metadata?.uid ?? '', nodeName: placement.nodeName });
    track(pod);
    try {
      await bind(pod, placement.nodeName);
    } catch (err) {
      assumed.delete(key);
      const now = pods.get(namespace, name);
      if (now) track(now);
      else placed.delete(key);
      if (isNotFound(err)) return;
      throw err;
    }
  };

  const worker = new KeyWorker(handle, { concurrency: 1, onError: (k, e) => opts.onError?.(`scheduling ${k}`, e) });
  await nodes.start();
  await claims.start();
  await classes.start();
  await pods.start();
  return {
    restarts: () => pods.restarts + nodes.restarts + claims.restarts + classes.restarts,
    async stop() {
      await worker.stop();
      await Promise.all([pods.stop(), nodes.stop(), claims.stop(), classes.stop()]);
    },
  };
}
