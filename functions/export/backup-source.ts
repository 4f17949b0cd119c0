/**
 * An export of a VirtualMachineBackup (KubeVirt's backup-source.go): the exporter serves a pull
 * mode backup's volumes as they are read from the running VM — `data` and `map` endpoints per
 * included volume under `/exports/<volume>/` — over the backup tunnel whose CA is virt-operator's
 * `kubevirt-backup-ca`. No claims, no manifest. Pure: the decisions, the pod's part, the links.
 *
 * Available while the backup's `Progressing` condition is True; content: its included volumes.
 * Its condition is a Ready condition (reason `VirtualMachineBackupReady`) that the status writes
 * over the pod's, and an unavailable backup is looked at again every 3 s.
 */
import { posix } from 'node:path';
import type { V1Affinity, V1EnvVar } from '@kubernetes/client-node';
import type { VirtualMachineBackup } from '../../shared/api/backup.ts';
import type { ExportLink } from '../../shared/api/export.ts';
import { APP_LABEL, VMI_ID_LABEL } from '../../shared/api/well-known.ts';
import { COND, REASON } from './names.ts';
import type { CondSpec, SourceResult } from './source.ts';

/** Where the export server serves a backup volume. */
const BACKUPS_BASE = '/exports';
export const backupDataUri = (volume: string) => posix.join(BACKUPS_BASE, volume, 'data');
export const backupMapUri = (volume: string) => posix.join(BACKUPS_BASE, volume, 'map');

/** KubeVirt's messages for the backup source's condition. */
export const BACKUP_MESSAGE = {
  notExist: 'VMBackup does not exist yet',
  notProgressing: 'VMBackup is not progressing',
  noProgressingCondition: 'VMBackup progressing condition not found',
  noContent: 'VMBackup has no included volumes',
} as const;

/** What the exporter needs of the backup besides its volumes. */
export interface BackupInfo {
  readonly uid: string;
  readonly type: string;
  readonly checkpointName?: string | undefined;
  readonly volumes: readonly string[];
  /** `kubevirt-backup-ca` `ca-bundle`, trimmed. */
  readonly caCert: string;
  /** The `vmi.kubevirt.io/id` of the backed-up VM's VMI (its launcher pod carries it). */
  readonly vmiId: string;
}

const progressingOf = (b: VirtualMachineBackup) => b.status?.conditions?.find((c) => c.type === COND_PROGRESSING);
const COND_PROGRESSING = 'Progressing';

/** The backup's condition, as a Ready condition (KubeVirt's SourceCondition of this source). */
export function backupCondition(b: VirtualMachineBackup | undefined): CondSpec {
  const c = (status: 'True' | 'False', message: string): CondSpec => ({ type: COND.ready, status, reason: REASON.backupReady, message });
  if (!b) return c('False', BACKUP_MESSAGE.notExist);
  if (!b.status) return c('False', BACKUP_MESSAGE.notProgressing);
  if ((b.status.includedVolumes ?? []).length === 0) return c('False', BACKUP_MESSAGE.noContent);
  const p = progressingOf(b);
  if (!p) return c('False', BACKUP_MESSAGE.noProgressingCondition);
  return c(p.status === 'True' ? 'True' : 'False', p.message ?? '');
}

/** The source a backup offers. `info` is what observe.ts read (its CA, the VMI's id). */
export function backupSource(b: VirtualMachineBackup, info: Omit<BackupInfo, 'uid' | 'type' | 'checkpointName' | 'volumes'>): SourceResult {
  const available = progressingOf(b)?.status === 'True';
  const volumes = (b.status?.includedVolumes ?? []).map((v) => v.volumeName);
  return {
    kind: 'backup',
    volumes: [],
    inUse: false,
    populated: available,
    // KubeVirt's ready condition is Initializing while there is nothing to serve; once there is, the pod's own takes over.
    readyCondition: { type: COND.ready, status: 'False', reason: REASON.initializing, message: '' },
    sourceCondition: backupCondition(b),
    backup: {
      uid: b.metadata?.uid ?? '',
      type: b.status?.type ?? '',
      checkpointName: b.status?.checkpointName,
      volumes,
      ...info,
    },
  };
}

/** The exporter's environment for a backup (after the common part), and its affinity to the VM's launcher when a checkpoint is read. */
export function backupPodPart(info: BackupInfo): { env: V1EnvVar[]; affinity?: V1Affinity } {
  const env: V1EnvVar[] = info.volumes.flatMap((v, i) => [
    { name: `BACKUP${i}_BACKUP_PATH`, value: v },
    { name: `BACKUP${i}_DATA_URI`, value: backupDataUri(v) },
    { name: `BACKUP${i}_MAP_URI`, value: backupMapUri(v) },
  ]);
  env.push({ name: 'BACKUP_CACERT', value: info.caCert }, { name: 'BACKUP_UID', value: info.uid }, { name: 'BACKUP_TYPE', value: info.type });
  if (info.checkpointName === undefined) return { env };
  env.push({ name: 'BACKUP_CHECKPOINT', value: info.checkpointName });
  // With changed-block tracking the checkpoint is read locally: next to the VM's launcher pod, if the scheduler can.
  const affinity: V1Affinity = {
    podAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { [APP_LABEL]: 'virt-launcher', [VMI_ID_LABEL]: info.vmiId } }, topologyKey: 'kubernetes.io/hostname' } },
      ],
    },
  };
  return { env, affinity };
}

/** The link's `backups`: a `data` and a `map` endpoint per included volume. */
export function backupLinks(info: BackupInfo, url: (uri: string) => string): NonNullable<ExportLink['backups']> {
  return info.volumes.map((v) => ({ name: v, endpoints: [{ endpoint: 'data', url: url(backupDataUri(v)) }, { endpoint: 'map', url: url(backupMapUri(v)) }] }));
}
