/**
 * The VM manifest ConfigMap `exporter-vm-manifest-<export>` of a VM or snapshot export (KubeVirt's
 * createManifestConfigMap, generateVMDefinitionFromVm and extraVMData), pure: what the export
 * server serves at `/manifests/all`.
 *
 * - `internal_host`, `internal_ca_cm` (a ConfigMap `export-ca-cm-<export>` with `ca.pem`), and
 *   `external_host` / `external_ca_cm` when an Ingress or Route publishes the export proxy;
 * - `virtualmachine-manifest`: the VM with its instance type and preference expanded into it (the
 *   caller expands: shared/instancetype/expand-vm.ts), status cleared, metadata reduced to name,
 *   namespace, labels and annotations, and every DataVolume template that backs a volume given an
 *   HTTP source with url "" (its `sourceRef` dropped);
 * - `dv-<claim>`: for each DataVolume or PVC volume without a template of that name whose claim
 *   exists, a DataVolume importing over HTTP into a claim like it (access modes, volume mode,
 *   resources);
 * - `export-name`.
 *
 * Values are JSON as KubeVirt's virt-controller writes them (compared on the live differential
 * lane): no apiVersion/kind (its informer's objects carry none), no zero creationTimestamp, an
 * empty status `{}`, keys of the objects built here in Go's field order. Nested content copied
 * from the VM keeps the API's order where Go writes struct order (the export server reads it back
 * with json.Unmarshal; order is not meaning).
 */
import type { V1ConfigMap, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachine } from '../../shared/api/index.ts';
import type { VirtualMachineExport } from '../../shared/api/export.ts';
import { canonicalQuantity } from '../../shared/api/quantity.ts';
import { externalBase } from './external-link.ts';
import { manifestConfigMapNameOf } from './names.ts';
import { exportRef } from './render-objects.ts';

/** The ConfigMap keys KubeVirt writes. */
export const MANIFEST_KEY = {
  internalHost: 'internal_host',
  internalCa: 'internal_ca_cm',
  externalHost: 'external_host',
  externalCa: 'external_ca_cm',
  vm: 'virtualmachine-manifest',
  exportName: 'export-name',
} as const;

/** The `dv-<name>` key of a claim's DataVolume manifest. */
export const dataVolumeKeyOf = (claim: string) => `dv-${claim}`;

/** The claim a DataVolume or PVC volume names ("" for other volumes). */
function claimOf(v: { dataVolume?: { name?: string }; persistentVolumeClaim?: { claimName?: string } }): string {
  return v.dataVolume?.name ?? v.persistentVolumeClaim?.claimName ?? '';
}

/** The claims of a VM's DataVolume and PVC volumes, in volume order (KubeVirt's GetVolumes without options). */
export function vmVolumeClaims(vm: VirtualMachine): string[] {
  return (vm.spec.template?.spec?.volumes ?? []).map((v) => claimOf(v as never)).filter((c) => c !== '');
}

/** The claims that get a `dv-<name>` entry: volume claims no DataVolume template names. */
export function claimsWithoutTemplate(vm: VirtualMachine): string[] {
  const templates = new Set((vm.spec.dataVolumeTemplates ?? []).map((t) => t.metadata?.name ?? ''));
  return vmVolumeClaims(vm).filter((c) => !templates.has(c));
}

/** `obj`'s keys in `order` first (those present), the rest after, as Go writes a struct's fields. */
function ordered<T extends Record<string, unknown>>(obj: T, order: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const k of order) if (obj[k] !== undefined) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out) && v !== undefined) out[k] = v;
  return out as T;
}

const VM_SPEC_ORDER = ['running', 'runStrategy', 'instancetype', 'preference', 'template', 'dataVolumeTemplates', 'updateVolumesStrategy'];
const DV_SPEC_ORDER = ['source', 'sourceRef', 'pvc', 'storage', 'priorityClassName', 'contentType', 'checkpoints', 'finalCheckpoint', 'preallocation'];

/** Go's ObjectMeta of name, namespace, labels and annotations. */
function reducedMeta(m: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) {
  return {
    ...(m?.name ? { name: m.name } : {}),
    ...(m?.namespace ? { namespace: m.namespace } : {}),
    ...(m?.labels && Object.keys(m.labels).length > 0 ? { labels: m.labels } : {}),
    ...(m?.annotations && Object.keys(m.annotations).length > 0 ? { annotations: m.annotations } : {}),
  };
}

/**
 * The `virtualmachine-manifest` object of an (already expanded) VM: status cleared, metadata
 * reduced, each DataVolume template that backs a volume importing over HTTP from "".
 */
export function vmManifest(vm: VirtualMachine): Record<string, unknown> {
  const claims = new Set(vmVolumeClaims(vm));
  const templates = vm.spec.dataVolumeTemplates?.map((t) => {
    if (!claims.has(t.metadata?.name ?? '')) return t;
    const { sourceRef: _dropped, ...spec } = (t.spec ?? {}) as Record<string, unknown>;
    return { ...t, spec: ordered({ ...spec, source: { http: { url: '' } } }, DV_SPEC_ORDER) };
  });
  const spec = ordered({ ...vm.spec, ...(templates ? { dataVolumeTemplates: templates } : {}) } as Record<string, unknown>, VM_SPEC_ORDER);
  return {
    metadata: reducedMeta(vm.metadata),
    spec,
    status: {},
  };
}

/** Quantities as the API writes them back (`1024Mi` → `1Gi`); one that does not parse is kept. */
function canonical(list: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!list) return undefined;
  return Object.fromEntries(
    Object.entries(list).map(([k, v]) => {
      try {
        return [k, canonicalQuantity(String(v))];
      } catch {
        return [k, String(v)];
      }
    }),
  );
}

/**
 * The `dv-<name>` DataVolume of a claim without a template (KubeVirt's createExportHttpDvFromPVC):
 * no apiVersion or kind, an HTTP source with url "", `storage` from the claim's access modes,
 * resources and volume mode.
 */
export function claimDataVolume(pvc: V1PersistentVolumeClaim, namespace: string): Record<string, unknown> {
  const s = pvc.spec ?? {};
  const limits = canonical(s.resources?.limits as Record<string, string> | undefined);
  const requests = canonical(s.resources?.requests as Record<string, string> | undefined);
  return {
    metadata: { name: pvc.metadata?.name ?? '', namespace },
    spec: {
      source: { http: { url: '' } },
      storage: {
        ...(s.accessModes && s.accessModes.length > 0 ? { accessModes: s.accessModes } : {}),
        resources: { ...(limits ? { limits } : {}), ...(requests ? { requests } : {}) },
        ...(s.volumeMode ? { volumeMode: s.volumeMode } : {}),
      },
    },
    status: {},
  };
}

export interface ManifestInput {
  /** The VM with its instance type and preference expanded. */
  readonly vm: VirtualMachine;
  /** The claims of {@link claimsWithoutTemplate} that exist. */
  readonly claims: readonly V1PersistentVolumeClaim[];
  readonly internalHost: string;
  readonly caBundle: string;
  /** Where an Ingress or Route publishes the export proxy, and its certificate for that host. */
  readonly external?: { readonly host: string; readonly cert: string } | undefined;
}

/** The VM manifest ConfigMap, owned by the export. */
export function renderManifestConfigMap(vme: VirtualMachineExport, input: ManifestInput): V1ConfigMap {
  const name = vme.metadata?.name ?? '';
  const ns = vme.metadata?.namespace ?? '';
  const caCm = (ca: string) => ({ metadata: { name: `export-ca-cm-${name}` }, data: { 'ca.pem': ca } });
  const data: Record<string, string> = {
    [MANIFEST_KEY.internalHost]: input.internalHost,
    [MANIFEST_KEY.internalCa]: JSON.stringify(caCm(input.caBundle)),
  };
  if (input.external) {
    data[MANIFEST_KEY.externalHost] = externalBase(input.external.host, ns, name);
    data[MANIFEST_KEY.externalCa] = JSON.stringify(caCm(input.external.cert));
  }
  data[MANIFEST_KEY.vm] = JSON.stringify(vmManifest(input.vm));
  data[MANIFEST_KEY.exportName] = name;
  for (const pvc of input.claims) data[dataVolumeKeyOf(pvc.metadata?.name ?? '')] = JSON.stringify(claimDataVolume(pvc, input.vm.metadata?.namespace ?? ns));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: manifestConfigMapNameOf(name), namespace: ns, ownerReferences: [exportRef(vme)] },
    data,
  };
}
