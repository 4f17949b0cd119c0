/**
 * The sandbox's volume provisioning (a CSI external-provisioner plus the PV controller's binder,
 * one loop for the cluster): a Pending claim whose StorageClass names a provisioner gets a
 * PersistentVolume after `provisionMs` and is bound to it (claim `spec.volumeName`, both
 * `Bound`), honouring `WaitForFirstConsumer` and claims restored from a VolumeSnapshot
 * ({@link decideClaim}). A claim naming a volume whose claimRef names it without a UID (a
 * static, pre-bound pair) is bound the same way. A released volume is deleted (reclaim `Delete`)
 * or marked `Released`.
 * Only the Kubernetes API is used, so it runs against the emulator and a real control plane
 * (where kube-controller-manager binds: pass `bind: false`).
 */
import { MERGE_PATCH, isNotFound, plain, statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { agentWorker, clusterCache, pvcCache } from './agent-worker.ts';
import { splitKey, type Pod } from '../nodes/objects.ts';
import { WatchedCache, type RawList } from '../nodes/watched-cache.ts';
import type { Clock } from '../clock.ts';
import { StepDelays } from './delays.ts';
import { STORAGE_CLASSES, VOLUME_SNAPSHOTS, claimsOf, type Pv, type Pvc, type StorageClass, type VolumeSnapshot } from './objects.ts';
import { classOf, decideClaim, renderPv, restoredFrom } from './provisioning.ts';

export interface PvProvisionerOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms from a claim being provisionable to its volume existing; default 100. */
  provisionMs?: number;
  /** Bind claims to their volumes as the PV controller does; default true. */
  bind?: boolean;
  onError?: (what: string, err: unknown) => void;
}

export interface PvProvisioner {
  /** Why a claim is still Pending, as last decided (for test diagnostics). */
  pendingReason(namespace: string, name: string): string | undefined;
  restarts(): number;
  stop(): Promise<void>;
}

type PodWithVolumes = Pod & { spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } };

export async function startPvProvisioner(opts: PvProvisionerOptions): Promise<PvProvisioner> {
  const { api, clock } = opts;
  const provisionMs = opts.provisionMs ?? 100;
  const bind = opts.bind ?? true;
  const core = api.core;
  const pending = new Map<string, string>();
  const delays = new StepDelays(clock, (key) => worker.add(key));
  // Keys are `pvc:<ns>/<name>` and `pv:<name>`: one worker serves both kinds.
  const pvcKey = (ns: string | undefined, name: string | undefined) => `pvc:${ns ?? ''}/${name ?? ''}`;

  const pvcs = pvcCache<Pvc>(api, 'provisioner', (event, pvc) => {
    if (event === 'delete') {
      delays.forget(pvcKey(pvc.metadata?.namespace, pvc.metadata?.name));
      // The claim went away: its volume is released.
      for (const pv of pvs.list()) if (pv.spec?.claimRef?.uid === pvc.metadata?.uid) worker.add(`pv:${pv.metadata?.name ?? ''}`);
    }
    worker.add(pvcKey(pvc.metadata?.namespace, pvc.metadata?.name));
  }, opts.onError);
  const pvs: WatchedCache<Pv> = new WatchedCache<Pv>({
    kc: api.kc,
    path: '/api/v1/persistentvolumes',
    list: async () => plain<RawList<Pv>>(await core.listPersistentVolume({})),
    onError: (e) => opts.onError?.('provisioner pv informer', e),
    onEvent: (_event, pv) => {
      worker.add(`pv:${pv.metadata?.name ?? ''}`);
      const ref = pv.spec?.claimRef;
      if (ref) worker.add(pvcKey(ref.namespace, ref.name));
    },
  });
  const wakePending = () => {
    for (const p of pvcs.list()) if (p.status?.phase !== 'Bound') worker.add(pvcKey(p.metadata?.namespace, p.metadata?.name));
  };
  const classes = clusterCache<StorageClass>(api, STORAGE_CLASSES, 'provisioner', wakePending, opts.onError);
  const pods: WatchedCache<PodWithVolumes> = new WatchedCache<PodWithVolumes>({
    kc: api.kc,
    path: '/api/v1/pods',
    list: async () => plain<RawList<PodWithVolumes>>(await core.listPodForAllNamespaces({})),
    onError: (e) => opts.onError?.('provisioner pod informer', e),
    onEvent: (_event, pod) => {
      for (const c of claimsOf(pod)) worker.add(pvcKey(pod.metadata?.namespace, c));
    },
  });
  const snapshots = clusterCache<VolumeSnapshot>(api, VOLUME_SNAPSHOTS, 'provisioner', (_event, vs) => {
    for (const p of pvcs.list(vs.metadata?.namespace)) if (restoredFrom(p) === vs.metadata?.name) worker.add(pvcKey(p.metadata?.namespace, p.metadata?.name));
  }, opts.onError);

  const consumerNode = (pvc: Pvc): string | undefined => {
    const selected = pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
    if (selected) return selected;
    const name = pvc.metadata?.name ?? '';
    return pods.list(pvc.metadata?.namespace).find((p) => p.spec?.nodeName && claimsOf(p).includes(name))?.spec?.nodeName;
  };

  const createPv = async (pv: Pv & Record<string, unknown>) => {
    try {
      await core.createPersistentVolume({ body: pv as never });
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw err;
    }
  };

  /** The PV controller's binding: claim → volume, then both statuses. */
  const bindClaim = async (pvc: Pvc, pv: Pv, provisioner: string) => {
    const { namespace = '', name = '', resourceVersion } = pvc.metadata ?? {};
    const annotations = {
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
      'volume.kubernetes.io/storage-provisioner': provisioner,
      'volume.beta.kubernetes.io/storage-provisioner': provisioner,
    };
    const pvName = pv.metadata?.name ?? '';
    await core.patchNamespacedPersistentVolumeClaim({ namespace, name, body: { metadata: { resourceVersion, annotations }, spec: { volumeName: pvName } } }, MERGE_PATCH);
    const status = { phase: 'Bound', accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'], capacity: { storage: pv.spec?.capacity?.storage ?? '1Gi' } };
    await core.patchNamespacedPersistentVolumeClaimStatus({ namespace, name, body: { status } }, MERGE_PATCH);
    await core.patchPersistentVolumeStatus({ name: pvName, body: { status: { phase: 'Bound' } } }, MERGE_PATCH);
  };

  const handleClaim = async (key: string) => {
    const { namespace, name } = splitKey(key.slice(4));
    const pvc = pvcs.get(namespace, name);
    if (!pvc) return;
    const uid = pvc.metadata?.uid;
    const existing = pvs.list().find((pv) => pv.spec?.claimRef?.uid === uid);
    const sc = classOf(pvc, classes.list()).sc;
    // A claim that names its volume (a static, pre-bound pair): the PV controller completes the
    // binding — the volume's claimRef gets the claim's UID, both turn Bound.
    if (!existing && bind && pvc.spec?.volumeName && pvc.status?.phase !== 'Bound') {
      const pv = pvs.get('', pvc.spec.volumeName);
      const ref = pv?.spec?.claimRef;
      if (pv && (!ref || (ref.namespace === namespace && ref.name === name && !ref.uid))) {
        await core.patchPersistentVolume({ name: pv.metadata?.name ?? '', body: { spec: { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid } } } }, MERGE_PATCH);
      }
      return;
    }
    if (existing) {
      // Provisioned already (maybe by an earlier pass that failed to bind): finish the binding.
      if (bind && pvc.status?.phase !== 'Bound') await bindClaim(pvc, existing, sc?.provisioner ?? '');
      pending.delete(key);
      return;
    }
    const d = decideClaim(pvc, {
      classes: classes.list(),
      consumerNode: consumerNode(pvc),
      snapshot: snapshots.get(namespace, restoredFrom(pvc) ?? ''),
    });
    if (!d) return;
    if ('wait' in d) {
      pending.set(key, d.wait);
      return;
    }
    pending.delete(key);
    if (!delays.due(key, 'provision', provisionMs)) return;
    await createPv(renderPv(pvc, d));
    // The PV's watch event re-queues the claim, which then binds it.
  };

  const handleVolume = async (key: string) => {
    const pv = pvs.get('', key.slice(3));
    const ref = pv?.spec?.claimRef;
    if (!pv || !ref?.uid || pv.metadata?.deletionTimestamp) return;
    const claim = pvcs.get(ref.namespace ?? '', ref.name ?? '');
    if (claim?.metadata?.uid === ref.uid) return;
    // The cache may lag behind a claim created just now: confirm with the API before releasing.
    try {
      const live = plain<Pvc>(await core.readNamespacedPersistentVolumeClaim({ namespace: ref.namespace ?? '', name: ref.name ?? '' }));
      if (live.metadata?.uid === ref.uid) return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const name = pv.metadata?.name ?? '';
    if ((pv.spec?.persistentVolumeReclaimPolicy ?? 'Delete') === 'Delete') await core.deletePersistentVolume({ name });
    else if (pv.status?.phase !== 'Released') await core.patchPersistentVolumeStatus({ name, body: { status: { phase: 'Released' } } }, MERGE_PATCH);
  };

  const worker = agentWorker('provisioner', (key) => (key.startsWith('pvc:') ? handleClaim(key) : handleVolume(key)), 2, opts.onError);
  await classes.start();
  await snapshots.start();
  await pods.start();
  await pvs.start();
  await pvcs.start();

  return {
    pendingReason: (namespace, name) => pending.get(pvcKey(namespace, name)),
    restarts: () => pvcs.restarts + pvs.restarts + classes.restarts + pods.restarts + snapshots.restarts,
    async stop() {
      await worker.stop();
      delays.stop();
      await Promise.all([pvcs.stop(), pvs.stop(), classes.stop(), pods.stop(), snapshots.stop()]);
    },
  };
}
