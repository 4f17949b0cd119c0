/** The resources the relay lists and watches, and how each is listed with client-node. */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { APP_LABEL } from '../../shared/api/well-known.ts';
import { DATA_VOLUMES, KUBEVIRTS, MIGRATIONS, VMIS, VMS } from '../../shared/api/index.ts';
import type { WatchedObject } from './map-event.ts';
import type { ListPage, ResourceWatch } from './reflector.ts';

interface RawList {
  items?: WatchedObject[];
  /** Raw JSON says `continue`; client-node's typed models (V1ListMeta) say `_continue`. */
  metadata?: { resourceVersion?: string; continue?: string; _continue?: string };
}

function page(list: RawList): ListPage {
  // Losing the token would end a relist after its first page and report every later object as deleted.
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '', continueToken: list.metadata?.continue ?? list.metadata?._continue };
}

/** Every resource the relay watches (DESIGN.md §1). Launcher pods: any pod with the `kubevirt.io` label key. */
export function watchedResources(kc: KubeConfig): ResourceWatch[] {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const cr = (kind: ResourceWatch['kind'], c: { group: string; version: string; plural: string }): ResourceWatch => ({
    kind,
    path: `/apis/${c.group}/${c.version}/${c.plural}`,
    list: async (limit, cont) =>
      page((await custom.listClusterCustomObject({ group: c.group, version: c.version, plural: c.plural, limit, ...(cont ? { _continue: cont } : {}) })) as RawList),
  });
  return [
    cr('VirtualMachineInstance', VMIS),
    cr('VirtualMachine', VMS),
    cr('VirtualMachineInstanceMigration', MIGRATIONS),
    cr('KubeVirt', KUBEVIRTS),
    cr('DataVolume', DATA_VOLUMES),
    {
      kind: 'Pod',
      path: '/api/v1/pods',
      labelSelector: APP_LABEL,
      list: async (limit, cont) => page((await core.listPodForAllNamespaces({ labelSelector: APP_LABEL, limit, ...(cont ? { _continue: cont } : {}) })) as unknown as RawList),
    },
    {
      kind: 'PersistentVolumeClaim',
      path: '/api/v1/persistentvolumeclaims',
      list: async (limit, cont) => page((await core.listPersistentVolumeClaimForAllNamespaces({ limit, ...(cont ? { _continue: cont } : {}) })) as unknown as RawList),
    },
  ];
}
