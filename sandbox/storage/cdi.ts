/**
 * The sandbox's CDI (one loop for the cluster): every DataVolume gets its claim, follows it to
 * `Succeeded` (after `importMs` of simulated population once bound), and a pre-populated one
 * adopts the claim a restore left for it ({@link nextDvStep}). Through the Kubernetes API only.
 */
import { MERGE_PATCH, statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { keyOf, splitKey } from '../nodes/objects.ts';
import { agentWorker, clusterCache, pvcCache } from './agent-worker.ts';
import type { Clock } from '../clock.ts';
import { StepDelays } from './delays.ts';
import { dvConditions, dvOwnerRef, nextDvStep, renderDvClaim } from './data-volume-status.ts';
import { DATA_VOLUMES, STORAGE_CLASSES, type DataVolume, type Pvc, type StorageClass } from './objects.ts';

export interface CdiOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from a bound claim to a populated one; default 200. */
  importMs?: number;
  onError?: (what: string, err: unknown) => void;
}

export interface Cdi {
  restarts(): number;
  stop(): Promise<void>;
}

export async function startCdi(opts: CdiOptions): Promise<Cdi> {
  const { api, clock } = opts;
  const importMs = opts.importMs ?? 200;
  const delays = new StepDelays(clock, (key) => worker.add(key));

  const dvs = clusterCache<DataVolume>(api, DATA_VOLUMES, 'cdi', (event, dv) => {
    if (event === 'delete') delays.forget(keyOf(dv));
    else worker.add(keyOf(dv));
  }, opts.onError);
  // A claim named like a DataVolume is its claim (created by CDI or left by a restore).
  const pvcs = pvcCache<Pvc>(api, 'cdi', (_event, pvc) => worker.add(keyOf(pvc)), opts.onError);
  const classes = clusterCache<StorageClass>(api, STORAGE_CLASSES, 'cdi', () => undefined, opts.onError);

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const dv = dvs.get(namespace, name);
    if (!dv) return;
    const pvc = pvcs.get(namespace, name);
    const step = nextDvStep(dv, pvc, classes.list());
    if (!step) return;
    if (step.act === 'create-claim') {
      try {
        await api.core.createNamespacedPersistentVolumeClaim({ namespace, body: renderDvClaim(dv) as never });
      } catch (err) {
        if (statusCodeOf(err) !== 409) throw err;
      }
      return;
    }
    if (step.act === 'adopt-claim') {
      const refs = [...(pvc?.metadata?.ownerReferences ?? []), dvOwnerRef(dv)];
      await api.core.patchNamespacedPersistentVolumeClaim(
        { namespace, name, body: { metadata: { resourceVersion: pvc?.metadata?.resourceVersion, ownerReferences: refs } } },
        MERGE_PATCH,
      );
      return;
    }
    if (step.populate && !delays.due(key, 'import', importMs)) {
      if (dv.status?.phase === 'ImportInProgress') return;
      return writeStatus(dv, 'ImportInProgress', '50.0%');
    }
    if (dv.status?.phase === step.phase && dv.status.progress === step.progress) return;
    await writeStatus(dv, step.phase, step.progress);
  };

  const writeStatus = async (dv: DataVolume, phase: string, progress: string) => {
    const { namespace = '', name = '', resourceVersion } = dv.metadata ?? {};
    const status = { phase, progress, claimName: name, conditions: dvConditions(phase, name, clock.isoNow()) };
    await api.custom.patchNamespacedCustomObjectStatus({ ...DATA_VOLUMES, namespace, name, body: { metadata: { resourceVersion }, status } }, MERGE_PATCH);
  };

  const worker = agentWorker('cdi', handle, 2, opts.onError);
  await classes.start();
  await pvcs.start();
  await dvs.start();
  return {
    restarts: () => dvs.restarts + pvcs.restarts + classes.restarts,
    async stop() {
      await worker.stop();
      delays.stop();
      await Promise.all([dvs.stop(), pvcs.stop(), classes.stop()]);
    },
  };
}
