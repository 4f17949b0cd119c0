/**
 * The storage a sandbox cluster offers when its storage agents run: one CSI driver with an
 * Immediate StorageClass (the default), a WaitForFirstConsumer one, and a VolumeSnapshotClass
 * for the driver (marked default), so snapshots of either class's volumes are possible.
 */
import { statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { DEFAULT_CLASS_ANNOTATION, STORAGE_CLASSES, VOLUME_SNAPSHOT_CLASSES } from './objects.ts';

export const SANDBOX_CSI_DRIVER = 'csi.sandbox.virt-reconciler.io';
export const IMMEDIATE_CLASS = 'sandbox-csi';
export const WFFC_CLASS = 'sandbox-csi-wffc';
export const SNAPSHOT_CLASS = 'sandbox-csi-snapclass';

/** Creates the classes (kept when they exist). An API server that does not serve a kind is told
 * to `onMissing` and skipped: the agents then simply see no class. */
export async function createSandboxStorageClasses(api: NodeSideApi, onMissing: (what: string) => void = () => undefined): Promise<void> {
  const createOrKeep = async (create: () => Promise<unknown>): Promise<void> => {
    try {
      await create();
    } catch (err) {
      if (statusCodeOf(err) === 404) onMissing('storage classes: kind not served by this API server');
      else if (statusCodeOf(err) !== 409) throw err;
    }
  };
  const sc = (name: string, mode: string, isDefault: boolean) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
    provisioner: SANDBOX_CSI_DRIVER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: mode,
    allowVolumeExpansion: true,
  });
  await createOrKeep(() => api.custom.createClusterCustomObject({ ...STORAGE_CLASSES, body: sc(IMMEDIATE_CLASS, 'Immediate', true) }));
  await createOrKeep(() => api.custom.createClusterCustomObject({ ...STORAGE_CLASSES, body: sc(WFFC_CLASS, 'WaitForFirstConsumer', false) }));
  await createOrKeep(() =>
    api.custom.createClusterCustomObject({
      ...VOLUME_SNAPSHOT_CLASSES,
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name: SNAPSHOT_CLASS, annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
        driver: SANDBOX_CSI_DRIVER,
        deletionPolicy: 'Delete',
      },
    }),
  );
}
