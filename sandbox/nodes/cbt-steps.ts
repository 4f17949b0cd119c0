/**
 * virt-handler's part of changed-block tracking, as pure functions (KubeVirt
 * `pkg/virt-handler/cbt.go` `HandleChangedBlockTracking`, `markTrackersForRedefinition`): the VM
 * controller creates the VMI with `changedBlockTracking.state: Initializing`; once a domain runs
 * whose claim-backed disks got their qcow2 overlays (they do when the domain was defined while the
 * state was `Initializing` or `Enabled`), the handler marks the VMI's backup trackers that hold a
 * checkpoint for redefinition and sets `Enabled`. It never sets `Disabled` or `PendingRestart`.
 */
import type { KubeObject, Vmi } from './objects.ts';

/** A VirtualMachineBackupTracker as far as the handler reads it. */
export interface Tracker extends KubeObject {
  spec?: { source?: { kind?: string; name?: string } };
  status?: { latestCheckpoint?: unknown; checkpointRedefinitionRequired?: boolean };
}

/** The status patch that enables CBT, or undefined when there is nothing to do. */
export function cbtStep(vmi: Vmi, overlaysApplied: boolean): Record<string, unknown> | undefined {
  const state = (vmi.status?.['changedBlockTracking'] as { state?: string } | undefined)?.state;
  if (state !== 'Initializing' || !overlaysApplied) return undefined;
  return { changedBlockTracking: { state: 'Enabled' } };
}

/** The VMI's trackers (source = its VM, same name) with a checkpoint and not yet marked. */
export function trackersToMark(vmi: Vmi, trackers: readonly Tracker[]): Tracker[] {
  const name = vmi.metadata?.name;
  return trackers.filter((t) => t.spec?.source?.name === name && t.status?.latestCheckpoint !== undefined && t.status.checkpointRedefinitionRequired !== true);
}
