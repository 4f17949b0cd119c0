/**
 * The sandbox's virt-exportserver processes: an exporter pod (label
 * `kubevirt.io.virt-export-service`) runs until the `DEADLINE` in its environment (RFC 3339,
 * sandbox clock), then exits 0, so the pod is `Succeeded` — the export controller's cue to
 * replace it or to end the export at its TTL. Starting the pod (Pending → Running once its
 * `certificates` and `token` Secrets exist) is the kubelet's part (nodes/pod-volumes.ts).
 */
import { MERGE_PATCH, listAllPods, type NodeSideApi } from '../nodes/api.ts';
import { agentWorker } from './agent-worker.ts';
import { keyOf, splitKey, timeMs, type Pod } from '../nodes/objects.ts';
import { finishedStatus } from '../nodes/pod-status.ts';
import { WatchedCache } from '../nodes/watched-cache.ts';
import type { Clock } from '../clock.ts';
import { StepDelays } from './delays.ts';

/** The label every exporter pod carries (its value names the export's service selector). */
export const EXPORT_SERVICE_LABEL = 'kubevirt.io.virt-export-service';

type PodWithEnv = Pod & { spec?: { containers?: { name: string; env?: { name: string; value?: string }[] }[] } };

/** The exporter's deadline (epoch ms), from the `DEADLINE` env of its containers. */
export function exportDeadlineOf(pod: PodWithEnv): number | undefined {
  for (const c of pod.spec?.containers ?? []) {
    const v = c.env?.find((e) => e.name === 'DEADLINE')?.value;
    const ms = timeMs(v);
    if (ms !== undefined) return ms;
  }
  return undefined;
}

export interface ExportServer {
  restarts(): number;
  stop(): Promise<void>;
}

export async function startExportServer(opts: { api: NodeSideApi; clock: Clock; onError?: (what: string, err: unknown) => void }): Promise<ExportServer> {
  const { api, clock } = opts;
  const delays = new StepDelays(clock, (key) => worker.add(key));
  const pods: WatchedCache<PodWithEnv> = new WatchedCache<PodWithEnv>({
    kc: api.kc,
    path: '/api/v1/pods',
    labelSelector: EXPORT_SERVICE_LABEL,
    list: listAllPods(api, EXPORT_SERVICE_LABEL) as never,
    onError: (e) => opts.onError?.('export-server pod informer', e),
    onEvent: (event, pod) => {
      if (event === 'delete') delays.forget(keyOf(pod));
      else worker.add(keyOf(pod));
    },
  });

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const pod = pods.get(namespace, name);
    if (!pod || pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) return;
    const deadline = exportDeadlineOf(pod);
    if (deadline === undefined) return;
    if (clock.nowMs() < deadline) return delays.wakeAt(key, deadline);
    const body = { metadata: { resourceVersion: pod.metadata?.resourceVersion }, status: finishedStatus(pod, 'Succeeded', 'Completed', clock.isoNow()) };
    await api.core.patchNamespacedPodStatus({ namespace, name, body }, MERGE_PATCH);
  };

  const worker = agentWorker('export-server', handle, 1, opts.onError);
  await pods.start();
  return {
    restarts: () => pods.restarts,
    async stop() {
      await worker.stop();
      delays.stop();
      await pods.stop();
    },
  };
}
