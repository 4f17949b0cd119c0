/**
 * The sandbox's CSI snapshotter (external-snapshotter + a CSI driver, one loop for the cluster):
 * gives every VolumeSnapshot a `creationTime` and `restoreSize` after `createMs`, then
 * `readyToUse=true` after `readyMs` more (simulated ms), or the error a test injected
 * ({@link nextSnapshotStep}). Talks to the API only through client-node (watch + status patch),
 * so it runs the same against the emulator and a real control plane.
 */
import { MERGE_PATCH, type NodeSideApi } from '../nodes/api.ts';
import { keyOf, splitKey } from '../nodes/objects.ts';
import type { WatchedCache } from '../nodes/watched-cache.ts';
import { agentWorker, clusterCache, pvcCache } from './agent-worker.ts';
import type { Clock } from '../clock.ts';
import { StepDelays } from './delays.ts';
import { VOLUME_SNAPSHOT_CLASSES, VOLUME_SNAPSHOTS, type Pvc, type VolumeSnapshot } from './objects.ts';
import { nextSnapshotStep } from './snapshot-status.ts';
import type { KubeObject } from '../nodes/objects.ts';

export interface CsiSnapshotterOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from a bound source to `creationTime`; default 200. */
  createMs?: number;
  /** Simulated ms from `creationTime` to `readyToUse`; default 300. */
  readyMs?: number;
  onError?: (what: string, err: unknown) => void;
}

/** A running snapshotter; see {@link startCsiSnapshotter}. */
export interface CsiSnapshotter {
  /** Test hook: the snapshot reports `status.error.message = message` (until {@link recover}). */
  failSnapshot(namespace: string, name: string, message: string): void;
  /** Test hook: lifts an injected failure; the snapshot proceeds. */
  recover(namespace: string, name: string): void;
  restarts(): number;
  stop(): Promise<void>;
}

export async function startCsiSnapshotter(opts: CsiSnapshotterOptions): Promise<CsiSnapshotter> {
  const { api, clock } = opts;
  const createMs = opts.createMs ?? 200;
  const readyMs = opts.readyMs ?? 300;
  const failures = new Map<string, string>();
  const delays = new StepDelays(clock, (key) => worker.add(key));

  const who = 'csi-snapshotter';
  const snapshots: WatchedCache<VolumeSnapshot> = clusterCache<VolumeSnapshot>(api, VOLUME_SNAPSHOTS, who, (event, vs) => {
    if (event === 'delete') delays.forget(keyOf(vs));
    else worker.add(keyOf(vs));
  }, opts.onError);
  const classes = clusterCache<KubeObject>(api, VOLUME_SNAPSHOT_CLASSES, who, () => {
    for (const vs of snapshots.list()) worker.add(keyOf(vs));
  }, opts.onError);
  const pvcs = pvcCache<Pvc>(api, who, (_event, pvc) => {
    for (const vs of snapshots.list(pvc.metadata?.namespace)) if (vs.spec?.source?.persistentVolumeClaimName === pvc.metadata?.name) worker.add(keyOf(vs));
  }, opts.onError);

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const vs = snapshots.get(namespace, name);
    if (!vs) return;
    const className = vs.spec?.volumeSnapshotClassName;
    const step = nextSnapshotStep(vs, {
      pvc: pvcs.get(namespace, vs.spec?.source?.persistentVolumeClaimName ?? ''),
      classFound: !className || classes.get('', className) !== undefined,
      failure: failures.get(key),
      nowIso: clock.isoNow(),
    });
    if (!step) return;
    const delay = step.step === 'create' ? createMs : step.step === 'ready' ? readyMs : 0;
    if (delay > 0 && !delays.due(key, step.step, delay)) return;
    // resourceVersion precondition: a step decided on a stale cache must not land (409, retried).
    const body = { metadata: { resourceVersion: vs.metadata?.resourceVersion }, status: step.status };
    await api.custom.patchNamespacedCustomObjectStatus({ ...VOLUME_SNAPSHOTS, namespace, name, body }, MERGE_PATCH);
  };

  const worker = agentWorker(who, handle, 2, opts.onError);
  await classes.start();
  await pvcs.start();
  await snapshots.start();

  return {
    failSnapshot(namespace, name, message) {
      failures.set(`${namespace}/${name}`, message);
      worker.add(`${namespace}/${name}`);
    },
    recover(namespace, name) {
      failures.delete(`${namespace}/${name}`);
      worker.add(`${namespace}/${name}`);
    },
    restarts: () => snapshots.restarts + classes.restarts + pvcs.restarts,
    async stop() {
      await worker.stop();
      delays.stop();
      await Promise.all([snapshots.stop(), classes.stop(), pvcs.stop()]);
    },
  };
}
