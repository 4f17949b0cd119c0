/**
 * Read-only access to the cluster for `trace` and `diagnose`, over `@kubernetes/client-node`
 * (the CLI is not bundled into a Lambda). Objects come back as plain JSON-ish records; what is
 * missing is `undefined`, never an error. Only GET and LIST: these commands never write.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, StorageV1Api, type KubeConfig } from '@kubernetes/client-node';

/** A Kubernetes object as these commands read it (fields accessed defensively). */
export interface KubeRecord {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly creationTimestamp?: string | Date;
    readonly deletionTimestamp?: string | Date;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly kind?: string; readonly name?: string; readonly uid?: string }[];
  };
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
  readonly [field: string]: unknown;
}

/** The custom resources these commands read. */
export const CUSTOM = {
  vmi: { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances' },
  vm: { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' },
  migration: { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstancemigrations' },
  kubevirt: { group: 'kubevirt.io', version: 'v1', plural: 'kubevirts' },
  dataVolume: { group: 'cdi.kubevirt.io', version: 'v1beta1', plural: 'datavolumes' },
} as const;

export type CustomKind = keyof typeof CUSTOM;

/** What the evidence gatherers read. Declared here, implemented by {@link clusterReader}. */
export interface ClusterReader {
  custom(kind: CustomKind, namespace: string, name: string): Promise<KubeRecord | undefined>;
  /** In one namespace, or every namespace when `namespace` is undefined. */
  customList(kind: CustomKind, namespace: string | undefined): Promise<KubeRecord[]>;
  pods(namespace: string, labelSelector: string): Promise<KubeRecord[]>;
  pvc(namespace: string, name: string): Promise<KubeRecord | undefined>;
  storageClass(name: string): Promise<KubeRecord | undefined>;
  /** Events about one object, oldest first. */
  events(namespace: string, kind: string, name: string): Promise<KubeRecord[]>;
}

/** A {@link ClusterReader} over a kubeconfig. */
export function clusterReader(kc: KubeConfig): ClusterReader {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  return {
    custom: (kind, namespace, name) => orMissing(() => custom.getNamespacedCustomObject({ ...CUSTOM[kind], namespace, name }) as Promise<KubeRecord>),
    async customList(kind, namespace) {
      const out = (namespace === undefined
        ? await custom.listClusterCustomObject({ ...CUSTOM[kind] })
        : await custom.listNamespacedCustomObject({ ...CUSTOM[kind], namespace })) as { items?: KubeRecord[] };
      return out.items ?? [];
    },
    async pods(namespace, labelSelector) {
      return (await core.listNamespacedPod({ namespace, labelSelector })).items as unknown as KubeRecord[];
    },
    pvc: (namespace, name) => orMissing(() => core.readNamespacedPersistentVolumeClaim({ namespace, name }) as unknown as Promise<KubeRecord>),
    // A cluster that does not serve StorageClasses (the emulator) reads as "unknown class".
    storageClass: (name) => orMissing(() => storage.readStorageClass({ name }) as unknown as Promise<KubeRecord>),
    async events(namespace, kind, name) {
      const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
      return list.items as unknown as KubeRecord[];
    },
  };
}

async function orMissing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ApiException && (err.code === 404 || err.code === 405)) return undefined;
    throw err;
  }
}
