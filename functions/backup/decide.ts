/**
 * The backup's pure decisions (reference §4.2): which stage the VMI's `backupStatus` puts it in,
 * the prerequisites a start waits on (the first failing one's text), the options of the backup
 * command, the outcome at completion, and Pull mode's TTL.
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceBackupStatus } from '../../shared/api/index.ts';
import type { VirtualMachineBackup, VirtualMachineBackupTracker } from '../../shared/api/backup.ts';
import { parseDurationMs } from '../../shared/api/go-duration.ts';
import { DEFAULT_PULL_TTL_MS, HOTPLUG_DISKS_PATH, utilityVolumeNameOf } from './names.ts';

export type Stage = 'start' | 'active' | 'completed';

/**
 * This backup's status on the VMI. One backup runs per VMI at a time; a `backupStatus` naming
 * another backup is not this one's (*inferred*: the start step then refuses with "another backup
 * … is already in progress").
 */
export function backupStatusOf(vmi: VirtualMachineInstance | undefined, backupName: string): VirtualMachineInstanceBackupStatus | undefined {
  const bs = vmi?.status?.changedBlockTracking?.backupStatus;
  return bs && bs.backupName === backupName ? bs : undefined;
}

export function stageOf(bs: VirtualMachineInstanceBackupStatus | undefined): Stage {
  if (bs?.completed === true) return 'completed';
  return bs ? 'active' : 'start';
}

/** A tracker needs its checkpoint redefined after a VM restart (virt-handler sets the flag). */
export const needsRedefinition = (t: VirtualMachineBackupTracker | undefined) => t?.status?.checkpointRedefinitionRequired === true && (t.status.latestCheckpoint?.name ?? '') !== '';

const backupVolumeKinds = ['persistentVolumeClaim', 'dataVolume', 'hostDisk'] as const;

/** The first unmet prerequisite of a start, as KubeVirt words it (its typos included); undefined when all hold. */
export function unmetPrerequisite(ns: string, name: string, vm: VirtualMachine | undefined, vmi: VirtualMachineInstance | undefined, tracker: VirtualMachineBackupTracker | undefined, nowMs: number): string | undefined {
  if (!vm) return `VM ${ns}/${name} doesnt exist`;
  if (!vmi) return `vm ${name} is not running, cannot do backup`;
  if (!(vmi.spec.volumes ?? []).some((v) => backupVolumeKinds.some((k) => (v as unknown as Record<string, unknown>)[k] !== undefined))) return `vm ${name} has no volumes to backup`;
  if (vmi.status?.changedBlockTracking?.state !== 'Enabled') return `vm ${name} has no ChangedBlockTracking, cannot start backup`;
  if (tracker && needsRedefinition(tracker)) return `Waiting for checkpoint redefinition on tracker ${tracker.metadata?.name ?? ''}`;
  const m = vmi.status?.migrationState;
  const started = m?.startTimestamp ? Date.parse(String(m.startTimestamp)) : undefined;
  const ended = m?.endTimestamp ? Date.parse(String(m.endTimestamp)) : undefined;
  if (started !== undefined && started <= nowMs && !(ended !== undefined && ended <= nowMs)) return `vm ${name} is currently migrating, waiting for migration to complete before starting backup`;
  return undefined;
}

/** True when the utility volume is hotplugged: a volumeStatus entry with hotplugVolume, `MountedToPod`. */
export function utilityVolumeAttached(vmi: VirtualMachineInstance, volume: string): boolean {
  return (vmi.status?.volumeStatus ?? []).some((s) => s.name === volume && s.hotplugVolume !== undefined && s.phase === 'MountedToPod');
}

/** Still in the VMI's spec or status: detaching is not over. */
export function utilityVolumePresent(vmi: VirtualMachineInstance, volume: string): boolean {
  const spec = (vmi.spec as { utilityVolumes?: { name: string }[] }).utilityVolumes ?? [];
  return spec.some((u) => u.name === volume) || (vmi.status?.volumeStatus ?? []).some((s) => s.name === volume);
}

/** The checkpoint an incremental backup starts from, if any. */
export function incrementalFrom(backup: VirtualMachineBackup, tracker: VirtualMachineBackupTracker | undefined): string | undefined {
  const latest = tracker?.status?.latestCheckpoint?.name ?? '';
  return latest !== '' && backup.spec.forceFullBackup !== true ? latest : undefined;
}

/** KubeVirt's BackupOptions for `Start`. */
export function startOptions(backup: VirtualMachineBackup, tracker: VirtualMachineBackupTracker | undefined): Record<string, unknown> {
  const name = backup.metadata?.name ?? '';
  const incremental = incrementalFrom(backup, tracker);
  return {
    backupName: name,
    cmd: 'Start',
    mode: backup.spec.mode ?? 'Push',
    backupStartTime: backup.metadata?.creationTimestamp,
    skipQuiesce: backup.spec.skipQuiesce === true,
    targetPath: `${HOTPLUG_DISKS_PATH}/${utilityVolumeNameOf(name)}`,
    ...(incremental !== undefined ? { incremental } : {}),
  };
}

export type Outcome = { kind: 'failed'; message: string } | { kind: 'warning'; message: string } | { kind: 'success' };

/** How a completed backup ended: failed (its message, or none given), with a warning, or clean. */
export function outcomeOf(bs: VirtualMachineInstanceBackupStatus): Outcome {
  if (bs.failed === true) return { kind: 'failed', message: bs.backupMsg || 'unknown, no completion message' };
  if (bs.backupMsg) return { kind: 'warning', message: bs.backupMsg };
  return { kind: 'success' };
}

/** Pull mode: ms of TTL left at `nowMs` (≤ 0 once expired). */
export function pullTtlLeftMs(backup: VirtualMachineBackup, nowMs: number): number {
  const ttl = (backup.spec.ttlDuration !== undefined ? parseDurationMs(backup.spec.ttlDuration) : undefined) ?? DEFAULT_PULL_TTL_MS;
  const created = Date.parse(String(backup.metadata?.creationTimestamp ?? ''));
  return Number.isNaN(created) ? ttl : created + ttl - nowMs;
}
