/**
 * virt-handler's side of a VMI backup, as pure functions (reference §6, "virt-handler (backup)"):
 * utility volumes in `vmi.spec.utilityVolumes` are attached (a `volumeStatus` entry with phase
 * `MountedToPod` and `hotplugVolume`) and detached when they leave the spec; a VMI that changed
 * block tracking selects reports CBT `state: Enabled`; and after a `Start` command, once the
 * controller has written `backupStatus={backupName,startTimestamp}` (never before: it does so with
 * a test-and-add patch after the call), the backup reports its volumes, checkpoint and quiesce
 * result, then `completed` (plus `failed`/`backupMsg` when aborted or failing).
 */
import { conditionOf, type Vmi } from '../nodes/objects.ts';

/** What a `backup` subresource call asked for (KubeVirt's BackupOptions, as far as it matters here). */
export interface BackupRequest {
  backupName: string;
  cmd: 'Start' | 'Abort' | 'Export' | string;
  mode?: string;
  skipQuiesce?: boolean;
  incremental?: string;
  exportServerAddr?: string;
}

/** Per-VMI state of the backup the handler runs. */
export interface RunningBackup {
  request: BackupRequest;
  abort: boolean;
  failure: string | undefined;
}

interface VolumeStatus {
  name: string;
  phase?: string;
  hotplugVolume?: Record<string, unknown>;
  [field: string]: unknown;
}

type BackupVmi = Vmi & {
  spec?: { utilityVolumes?: { name: string; claimName?: string }[] };
  status?: { volumeStatus?: VolumeStatus[]; changedBlockTracking?: { state?: string; backupStatus?: Record<string, unknown> } };
};

/** `status.volumeStatus` with the utility volumes attached and detached, or undefined if unchanged. */
export function utilityVolumeStatus(vmi: BackupVmi): VolumeStatus[] | undefined {
  const wanted = new Set((vmi.spec?.utilityVolumes ?? []).map((u) => u.name));
  const regular = new Set((vmi.spec?.volumes ?? []).map((v) => v.name));
  const current = vmi.status?.volumeStatus ?? [];
  // Only hotplugged entries that are neither utility volumes nor spec volumes are detached, and
  // only those this agent attached (its own pod name, or none): an unplugged volume whose
  // attachment pod the VMI controller still holds goes through the controller's Detaching.
  const marker = `hp-volume-${vmi.metadata?.name ?? ''}`;
  const ours = (s: VolumeStatus) => {
    const pod = (s.hotplugVolume as { attachPodName?: string } | undefined)?.attachPodName;
    return pod === undefined || pod === marker;
  };
  const kept = current.filter((s) => !s.hotplugVolume || wanted.has(s.name) || regular.has(s.name) || !ours(s));
  const have = new Set(kept.map((s) => s.name));
  const added: VolumeStatus[] = [...wanted]
    .filter((n) => !have.has(n))
    .map((name) => ({ name, target: '', phase: 'MountedToPod', reason: 'VolumeMountedToPod', message: `Volume ${name} has been mounted in virt-launcher pod`, hotplugVolume: { attachPodName: marker } }));
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}

/** Volume names a backup covers: the VMI's PVC, DataVolume and hostDisk volumes. */
export function backupVolumesOf(vmi: Vmi): { volumeName: string }[] {
  return (vmi.spec?.volumes ?? []).filter((v) => 'persistentVolumeClaim' in v || 'dataVolume' in v || 'hostDisk' in v).map((v) => ({ volumeName: v.name }));
}

/** The next `backupStatus` fields to merge in, and which delay must pass first. */
export type BackupStep = { step: 'progress' | 'complete' | 'end'; delay: boolean; fields: Record<string, unknown> } | undefined;

export function nextBackupStep(vmi: BackupVmi, run: RunningBackup | undefined, nowIso: string): BackupStep {
  const bs = vmi.status?.changedBlockTracking?.backupStatus;
  if (!run || !bs || bs.backupName !== run.request.backupName || bs.completed === true) return undefined;
  if (run.abort) return { step: 'end', delay: false, fields: { completed: true, failed: true, backupMsg: 'backup was aborted', endTimestamp: nowIso } };
  if (run.failure !== undefined) return { step: 'end', delay: false, fields: { completed: true, failed: true, backupMsg: run.failure, endTimestamp: nowIso } };
  if (!bs.volumes) {
    const agent = conditionOf(vmi.status?.conditions, 'AgentConnected') !== undefined;
    const quiesceStatus = run.request.skipQuiesce ? 'Skipped' : agent ? 'Succeeded' : 'Failed';
    return { step: 'progress', delay: true, fields: { volumes: backupVolumesOf(vmi), checkpointName: run.request.backupName, quiesceStatus } };
  }
  // A pull-mode backup stays open until the exporter was handed over (the Export command).
  if (run.request.mode === 'Pull' && !run.request.exportServerAddr) return undefined;
  return { step: 'complete', delay: true, fields: { completed: true, endTimestamp: nowIso } };
}
