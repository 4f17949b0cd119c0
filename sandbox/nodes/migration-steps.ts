/**
 * What the source and target virt-handlers do next for a migration that the migration controller
 * has handed off (vmi.status.migrationState with migrationUid, targetNode and targetPod set, label
 * `kubevirt.io/migrationTargetNodeName`; reference §d.3–d.4). One step per call, as a pure
 * function; the caller applies it after `delay` simulated ms. The controller's phases follow
 * these fields: targetNodeAddress → TargetReady, startTimestamp → Running, completed → Succeeded,
 * failed → Failed.
 */
import { isTerminalPhase, type Condition, type MigrationState, type Pod, type Vmi } from './objects.ts';
import { appliedHotplugStatus } from './hotplug-apply.ts';
import { finishedVolumeMigrationStatus } from './volume-migration-apply.ts';

export const NODE_NAME_LABEL = 'kubevirt.io/nodeName';
export const MIGRATION_TARGET_NODE_LABEL = 'kubevirt.io/migrationTargetNodeName';

/** Simulated durations of a migration. */
export interface MigrationTimings {
  /** Target handler preparing the target domain (→ targetNodeAddress). */
  prepareMs: number;
  /** Memory transfer (startTimestamp → target domain ready). */
  transferMs: number;
}

export const DEFAULT_MIGRATION_TIMINGS: MigrationTimings = { prepareMs: 500, transferMs: 3000 };

/** One write to the VMI (one merge patch of the object: VMIs have no /status subresource).
 * `status` is merged into `.status` (nested objects merge), `labels` into `.metadata.labels`
 * (null removes). */
export interface MigrationStep {
  step: 'prepare-target' | 'start' | 'abort' | 'fail' | 'target-domain-ready' | 'complete' | 'relabel';
  delayMs: number;
  status?: Record<string, unknown>;
  labels?: Record<string, string | null>;
}

export interface MigrationInputs {
  vmi: Vmi;
  /** The target launcher pod, if it exists. */
  targetPod: Pod | undefined;
  /** InternalIP of a node. */
  nodeAddress: (node: string) => string | undefined;
  /** Failure reason when a test asked this migration to fail. */
  failWith: string | undefined;
  nowIso: string;
  timings: MigrationTimings;
  /** A test asked the memory hotplug this migration carries to fail (`HotMemoryChange=False`). */
  failMemoryHotplug?: boolean;
  /** Interfaces as the target domain reports them. */
  targetInterfaces: (pod: Pod) => unknown[];
}

/** The handed-off, unfinished migration on a VMI, if any. */
export function activeMigration(vmi: Vmi): MigrationState | undefined {
  const ms = vmi.status?.migrationState;
  if (!ms?.migrationUid || !ms.targetNode || !ms.targetPod) return undefined;
  return ms;
}

/** The next step, or undefined when there is nothing to do (yet). */
export function nextMigrationStep(input: MigrationInputs): MigrationStep | undefined {
  const { vmi, targetPod, nowIso, timings } = input;
  const ms = activeMigration(vmi);
  if (!ms) return undefined;
  const labels = vmi.metadata?.labels ?? {};
  if (ms.completed) {
    // Final bookkeeping on the VMI's labels, once the completed state has been written and seen.
    const want: Record<string, string | null> = {};
    if (MIGRATION_TARGET_NODE_LABEL in labels) want[MIGRATION_TARGET_NODE_LABEL] = null;
    if (!ms.failed && labels[NODE_NAME_LABEL] !== ms.targetNode) want[NODE_NAME_LABEL] = ms.targetNode!;
    return Object.keys(want).length > 0 ? { step: 'relabel', delayMs: 0, labels: want } : undefined;
  }
  const end = (failureReason: string, extra: Record<string, unknown> = {}): MigrationStep['status'] => ({
    migrationState: { failed: true, completed: true, endTimestamp: nowIso, failureReason, ...(ms.startTimestamp ? {} : { startTimestamp: nowIso }), ...extra },
  });
  if (ms.abortRequested) {
    return { step: 'abort', delayMs: 0, status: end('Live migration aborted', { abortStatus: 'Succeeded' }) };
  }
  const targetRunning = targetPod?.status?.phase === 'Running' && !targetPod.metadata?.deletionTimestamp;
  if (!ms.targetNodeAddress) {
    // Before the source starts, a missing target pod is the controller's to report (§d.4).
    if (!targetRunning) return undefined;
    const address = input.nodeAddress(ms.targetNode!) ?? '';
    return {
      step: 'prepare-target',
      delayMs: timings.prepareMs,
      status: {
        migrationState: {
          targetNodeAddress: address,
          targetDirectMigrationNodePorts: { '49152': 0, '49153': 0 },
          targetState: { node: ms.targetNode, nodeAddress: address, pod: ms.targetPod, migrationUID: ms.migrationUid, virtualMachineInstanceUID: vmi.metadata?.uid, domainName: vmi.metadata?.name, domainNamespace: vmi.metadata?.namespace },
        },
      },
    };
  }
  if (!ms.startTimestamp) {
    const sourceNode = ms.sourceNode ?? vmi.status?.nodeName;
    return {
      step: 'start',
      delayMs: 0,
      status: {
        migrationState: {
          startTimestamp: nowIso,
          mode: 'PreCopy',
          migrationNetworkType: 'Pod',
          sourceNode,
          sourceState: { node: sourceNode, pod: ms.sourcePod, migrationUID: ms.migrationUid, virtualMachineInstanceUID: vmi.metadata?.uid, domainName: vmi.metadata?.name, domainNamespace: vmi.metadata?.namespace },
        },
      },
    };
  }
  if (!targetRunning || isTerminalPhase(targetPod?.status?.phase)) return { step: 'fail', delayMs: 0, status: end('target pod is down') };
  if (input.failWith !== undefined) return { step: 'fail', delayMs: timings.transferMs, status: end(input.failWith) };
  if (!ms.targetNodeDomainDetected) {
    return {
      step: 'target-domain-ready',
      delayMs: timings.transferMs,
      status: { migrationState: { targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: nowIso, targetState: { domainDetected: true, domainReadyTimestamp: nowIso } } },
    };
  }
  // The target domain takes a hot-plugged CPU or memory change (hotplug-apply.ts) and runs on
  // the migrated volumes' destination claims (volume-migration-apply.ts).
  const hotplug = appliedHotplugStatus(vmi, nowIso, input.failMemoryHotplug === true);
  const volumes = finishedVolumeMigrationStatus(vmi, (hotplug?.['conditions'] as Condition[] | undefined) ?? vmi.status?.conditions ?? []);
  return {
    step: 'complete',
    delayMs: 0,
    status: {
      nodeName: ms.targetNode,
      interfaces: input.targetInterfaces(targetPod!),
      migrationState: { completed: true, endTimestamp: nowIso },
      // As virt-handler on the target: the evacuation mark is done with, and the launcher
      // version is unknown until the VMI controller reads it from the new pod.
      evacuationNodeName: null,
      launcherContainerImageVersion: null,
      ...hotplug,
      ...volumes,
    },
  };
}
