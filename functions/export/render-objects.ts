/**
 * The objects an export owns besides its pod (reference §3.3): the service, the token Secret,
 * the exporter's serving-certificate Secret (owned by the pod), the claims an export of a
 * snapshot restores (the VM manifest ConfigMap is manifest.ts). Pure: inputs in, objects out.
 */
import { randomInt } from 'node:crypto';
import type { V1PersistentVolumeClaim, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import type { CsiVolumeSnapshot, SnapshotVolumeBackup, VirtualMachineExport } from '../../shared/api/export.ts';
import { controllerRef, type ControllerRef } from '../../shared/predicates/owner-refs.ts';
import { CONTENT_TYPE_ANNOTATION, EXPORT_API_VERSION, EXPORT_SERVICE_LABEL, EXPORTER_LABEL_KEY, EXPORTER_LABEL_VALUE, KIND_EXPORT, selectorValueOf, serviceNameOf, snapshotClaimNameOf } from './names.ts';

export const exportRef = (vme: VirtualMachineExport): ControllerRef => controllerRef(EXPORT_API_VERSION, KIND_EXPORT, vme);

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const ALNUM = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `n` random characters of `alphabet` (crypto-strength). */
export function randomString(n: number, alphabet = ALNUM): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}


export function renderService(vme: VirtualMachineExport): V1Service {
  const name = vme.metadata?.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: serviceNameOf(name),
      namespace: vme.metadata?.namespace ?? '',
      labels: { ...(vme.metadata?.labels ?? {}), [EXPORTER_LABEL_KEY]: EXPORTER_LABEL_VALUE },
      annotations: { ...(vme.metadata?.annotations ?? {}) },
      ownerReferences: [exportRef(vme)],
    },
    spec: {
      ports: [{ name: 'export', protocol: 'TCP', port: 443, targetPort: 8443 as never }],
      selector: { [EXPORT_SERVICE_LABEL]: selectorValueOf(name) },
    },
  };
}

/** The default token Secret: Opaque, `token` = 20 random characters of [0-9A-Za-z]. */
export function renderTokenSecret(vme: VirtualMachineExport, secretName: string, token = randomString(20)): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName, namespace: vme.metadata?.namespace ?? '', ownerReferences: [exportRef(vme)] },
    type: 'Opaque',
    data: { token: b64(token) },
  };
}

/** The pod's serving-certificate Secret, controlled by the pod (it goes with the pod). */
export function renderCertSecret(pod: V1Pod, secretName: string, cert: { certPem: string; keyPem: string }): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secretName,
      namespace: pod.metadata?.namespace ?? '',
      ownerReferences: [controllerRef('v1', 'Pod', { metadata: { name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' } })],
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(cert.certPem), 'tls.key': b64(cert.keyPem) },
  };
}

/** Annotation prefixes a restored claim does not inherit (CDI's own, binding and provisioning state). */
const DROPPED_ANNOTATION_PREFIXES = ['pv.kubernetes.io', 'volume.beta.kubernetes.io', 'cdi.kubevirt.io', 'volume.kubernetes.io', 'k8s.io/CloneRequest', 'k8s.io/CloneOf'];

function keptAnnotations(a: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(a ?? {}).filter(([k]) => k === CONTENT_TYPE_ANNOTATION || !DROPPED_ANNOTATION_PREFIXES.some((p) => k.startsWith(p))));
}

/** Quantity → bytes, for comparing a restore size with a request (binary and decimal suffixes). */
export function quantityBytes(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(q.trim());
  if (!m) return undefined;
  const mult: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
  return Number(m[1]) * mult[m[2] ?? '']!;
}

/**
 * The claim an export of a snapshot restores one volume into (`<export>-<backup claim>`): the
 * backup claim's labels, its annotations minus provisioning state, its access modes, class and
 * mode, the VolumeSnapshot as data source, the larger of the request and the restore size, and
 * `contentType=kubevirt` when the source VM's volume is a DataVolume or PVC.
 */
export function renderSnapshotClaim(vme: VirtualMachineExport, backup: SnapshotVolumeBackup, vs: CsiVolumeSnapshot, sourceVmVolumeIsDisk: boolean): V1PersistentVolumeClaim {
  const src = backup.persistentVolumeClaim;
  const spec = src.spec as { accessModes?: string[]; resources?: { requests?: Record<string, string> }; storageClassName?: string; volumeMode?: string };
  const request = spec.resources?.requests?.storage;
  const restoreSize = vs.status?.restoreSize;
  const useRestore = restoreSize !== undefined && (request === undefined || (quantityBytes(restoreSize) ?? 0) > (quantityBytes(request) ?? 0));
  const dataSource = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: backup.volumeSnapshotName ?? '' };
  const annotations = keptAnnotations(src.metadata?.annotations);
  if (sourceVmVolumeIsDisk) annotations[CONTENT_TYPE_ANNOTATION] = 'kubevirt';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: snapshotClaimNameOf(vme.metadata?.name ?? '', src.metadata?.name ?? ''),
      namespace: vme.metadata?.namespace ?? '',
      labels: { ...(src.metadata?.labels ?? {}) },
      annotations,
      ownerReferences: [exportRef(vme)],
    },
    spec: {
      ...(spec.accessModes ? { accessModes: spec.accessModes } : {}),
      resources: { requests: { ...(spec.resources?.requests ?? {}), ...(useRestore ? { storage: restoreSize } : {}) } },
      ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
      ...(spec.volumeMode !== undefined ? { volumeMode: spec.volumeMode } : {}),
      dataSource,
      dataSourceRef: dataSource,
    },
  };
}

/** True when the VM volume `volumeName` is a DataVolume or PVC volume. */
export function isDiskVolume(vmSpec: Record<string, unknown> | undefined, volumeName: string): boolean {
  const volumes = ((vmSpec?.template as { spec?: { volumes?: { name: string; dataVolume?: unknown; persistentVolumeClaim?: unknown }[] } } | undefined)?.spec?.volumes ?? []);
  const v = volumes.find((x) => x.name === volumeName);
  return v !== undefined && (v.dataVolume !== undefined || v.persistentVolumeClaim !== undefined);
}
