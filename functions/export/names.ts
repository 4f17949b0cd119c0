/**
 * The export controller's names and constants, exactly as KubeVirt spells them
 * (reference-snapshot-export-backup.md §3): the service, pod and token Secret names (library-go
 * GetName with FNV-32a shortening), the labels that tie pod and service together, the condition
 * types and reasons, the event reasons, the 3 s requeue and the 2 h default TTL.
 */
import { getName } from '../../shared/storage/get-name.ts';
export { CONTENT_TYPE_ANNOTATION } from '../../shared/api/well-known.ts';

export const EXPORT_API_VERSION = 'export.kubevirt.io/v1';
export const KIND_EXPORT = 'VirtualMachineExport';
/** The event recorder's component upstream. */
export const EXPORT_EVENT_SOURCE = 'export-controller';

/** The service label (the service informer lists only these); the pod's is overwritten. */
export { APP_LABEL as EXPORTER_LABEL_KEY } from '../../shared/api/well-known.ts';
export const EXPORTER_LABEL_VALUE = 'virt-exporter';
/** Pod label and service selector key. */
export const EXPORT_SERVICE_LABEL = 'kubevirt.io.virt-export-service';
export const CERT_PARAMS_ANNOTATION = 'kubevirt.io/export.certParameters';

/** Fixed requeue of a source that has content but is not available yet. */
export const REQUEUE_SECONDS = 3;
/** `DefaultDurationTTL`. */
export const DEFAULT_TTL_MS = 2 * 60 * 60 * 1000;
/** The exporter's serving certificate: 24 h, renewed 0.2 × before it ends, unless the KubeVirt CR says otherwise. */
export const DEFAULT_CERT_DURATION_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_RENEW_BEFORE_FRACTION = 0.2;

/** The ConfigMaps and Secret virt-operator publishes in the KubeVirt namespace. */
export const EXPORT_CA = 'kubevirt-export-ca';
/** The backup tunnel's CA bundle (a backup source's exporter trusts it). */
export const BACKUP_CA = 'kubevirt-backup-ca';
export const CA_BUNDLE_KEY = 'ca-bundle';

export const PHASE = { pending: 'Pending', ready: 'Ready', terminated: 'Terminated', skipped: 'Skipped' } as const;

export const COND = { ready: 'Ready', pvcReady: 'PVCReady', volumesCreated: 'VolumesCreated' } as const;

export const REASON = {
  initializing: 'Initializing',
  podReady: 'PodReady',
  podCompleted: 'PodCompleted',
  podPending: 'PodPending',
  unknown: 'Unknown',
  inUse: 'InUse',
  pvcNotFound: 'PVCNotFound',
  pvcBound: 'PVCBound',
  pvcPending: 'PVCPending',
  vmNotFound: 'VMNotFound',
  vmNoVolumes: 'VMNoVolumes',
  volumesNotPopulated: 'VolumesNotPopulated',
  snapshotNotFound: 'VMSnapshotNotFound',
  snapshotNoVolumes: 'VMSnapshotNoVolumes',
  notAllPvcsCreated: 'NotAllPVCsCreated',
  allPvcsReady: 'AllPVCsReady',
  notAllPvcsReady: 'NotAllPVCsReady',
  backupReady: 'VirtualMachineBackupReady',
} as const;

export const EVENT = {
  serviceCreated: 'ServiceCreated',
  secretCreated: 'SecretCreated',
  manifestCreated: 'DataManifestCreated',
  podCreated: 'ExporterPodCreated',
  podFailedOrCompleted: 'ExporterPodFailedOrCompleted',
  certParamsChanged: 'CertificateParametersChanged',
  paused: 'ExportPaused',
  /** Ours (not KubeVirt's): the bad-input case of a source PVC that does not exist, once. */
  pvcNotFound: 'PVCNotFound',
} as const;

const dashed = (name: string) => name.replaceAll('.', '-');

/** `GetName("virt-export", S, 63)`, S = the export name with "." → "-", one character shorter at exactly 53. */
export function serviceNameOf(exportName: string): string {
  let s = dashed(exportName);
  if (s.length === 53) s = s.slice(0, 52);
  return getName('virt-export', s, 63);
}

/** The exporter pod: `GetName("virt-export", <export name>, 63)`. */
export const podNameOf = (exportName: string) => getName('virt-export', exportName, 63);

/** The pod label / service selector value: the export name if it fits a label, else the pod name. */
export const selectorValueOf = (exportName: string) => (exportName.length <= 63 ? exportName : getName('virt-export', exportName, 63));

/** The default token Secret `export-token-<name>`. */
export const tokenSecretNameOf = (exportName: string) => getName('export-token', exportName, 63);

/** The VM manifest ConfigMap of a VM or snapshot export. */
export const manifestConfigMapNameOf = (exportName: string) => `exporter-vm-manifest-${exportName}`;

/** The claim an export of a snapshot restores a volume into: `<export name>-<backup PVC name>`. */
export const snapshotClaimNameOf = (exportName: string, backupClaim: string) => `${exportName}-${backupClaim}`;

/** The pod volume of a claim: its name with "." → "-", GetName-shortened when too long. */
export function podVolumeNameOf(claim: string): string {
  const d = dashed(claim);
  return d.length > 63 ? getName('virt-export', d, 63) : d;
}
