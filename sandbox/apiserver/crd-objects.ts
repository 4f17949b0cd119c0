/**
 * The CustomResourceDefinition objects a real cluster shows for the custom resources the emulator
 * serves (`apiextensions.k8s.io/v1 customresourcedefinitions`, list, get and watch): one per CRD
 * of `infra/crds/`, as the apiextensions server keeps it once established — names accepted,
 * `Established` and `NamesAccepted` true, the storage version in `storedVersions`. Clients such as
 * KubeVirt's virt-controller list and watch them to learn which optional APIs exist (CDI, the
 * snapshotter) before they start.
 *
 * They are made from the parsed definitions (crds.ts), not from the YAML, so an emulator start
 * costs no second parse; what a parsed definition drops (descriptions outside the schemas,
 * `conversion`, a version's `served: false`) is absent here too. A CRD created over HTTP is
 * stored like any object but does not add a served resource: the served set is fixed at start.
 */
import { randomUUID } from 'node:crypto';
import type { Core } from './core.ts';
import type { CrdInfo, CrdVersion } from './crds.ts';

const APISERVER_IDENTITY = 'system:apiserver';

/** A parsed version's printer columns as written: the parser adds the default `Age` column to a version that declared none. */
function declaredColumns(v: CrdVersion): CrdVersion['columns'] {
  const [only, ...rest] = v.columns;
  if (rest.length === 0 && only?.name === 'Age' && only.jsonPath === '.metadata.creationTimestamp' && only.description === undefined) return [];
  return v.columns;
}

/** The CustomResourceDefinition object for one parsed CRD. */
export function crdObject(crd: CrdInfo, now: string): Record<string, unknown> {
  const names = {
    kind: crd.kind,
    listKind: crd.listKind,
    plural: crd.plural,
    singular: crd.singular,
    ...(crd.shortNames.length > 0 ? { shortNames: crd.shortNames } : {}),
    ...(crd.categories.length > 0 ? { categories: crd.categories } : {}),
  };
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', lastTransitionTime: now, reason, message });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${crd.plural}.${crd.group}`, uid: randomUUID(), generation: 1, creationTimestamp: now },
    spec: {
      group: crd.group,
      names,
      scope: crd.namespaced ? 'Namespaced' : 'Cluster',
      versions: crd.versions.map((v) => {
        const columns = declaredColumns(v);
        const subresources = { ...(v.status ? { status: {} } : {}), ...(v.scale ? { scale: v.scale } : {}) };
        return {
          name: v.name,
          served: true,
          storage: v.storage,
          schema: { openAPIV3Schema: v.schema },
          ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
          ...(columns.length > 0 ? { additionalPrinterColumns: columns } : {}),
          ...(v.deprecationWarning ? { deprecated: true, deprecationWarning: v.deprecationWarning } : {}),
        };
      }),
      conversion: { strategy: 'None' },
    },
    status: {
      acceptedNames: names,
      conditions: [condition('NamesAccepted', 'NoConflicts', 'no conflicts found'), condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
      storedVersions: crd.versions.filter((v) => v.storage).map((v) => v.name),
    },
  };
}

/** Stores one CustomResourceDefinition object per served CRD (an emulator start). */
export function storeCrdObjects(core: Core, crds: readonly CrdInfo[]): void {
  const res = core.registry.byPath('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
  if (!res) return;
  const now = core.clock.isoNow();
  for (const crd of crds) core.store.put(res, crdObject(crd, now) as never, { identity: APISERVER_IDENTITY, verb: 'create' });
}
