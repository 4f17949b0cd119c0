/**
 * The target pod's `kubevirt.io/migration-target-ready-timestamp` annotation, pure: KubeVirt's
 * migration controller adds it (a JSON patch `add`) on a pass that starts with the migration
 * Running (ours: a pass that goes through Running), when the VMI reports `migrationState.targetNodeDomainReadyTimestamp` and the target
 * pod does not carry it yet; a decentralized migration's source side never does. The value is the
 * timestamp as Go prints a time (`time.Time.String()`), in the controller's zone (UTC).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { MIGRATION_TARGET_READY_TIMESTAMP_ANNOTATION } from '../../shared/api/well-known.ts';
import { escapeJsonPointer, type JsonPatchOperation } from '../../shared/kube/client.ts';
import type { PhaseResult } from './phases.ts';

const RFC3339 = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * An RFC 3339 timestamp as Go's `time.Time.String()` prints it in UTC:
 * `2026-12-06 13:05:29.5 +0000 UTC` (fractional seconds only when non-zero, trailing zeros cut).
 * Throws on a value that is not RFC 3339: the API server would not have stored it.
 */
export function goTimeString(rfc3339: string): string {
  const m = RFC3339.exec(rfc3339);
  if (!m) throw new Error(`not an RFC 3339 timestamp: ${JSON.stringify(rfc3339)}`);
  let [, date = '', clock = '', fraction = '', zone = ''] = m;
  // An offset other than Z: moved to UTC (millisecond precision is all a Date keeps).
  if (zone.toUpperCase() !== 'Z') {
    const utc = new Date(rfc3339).toISOString();
    [date, clock] = [utc.slice(0, 10), utc.slice(11, 19)];
    fraction = utc.slice(20, 23);
  }
  const cut = fraction.replace(/0+$/, '');
  return `${date} ${clock}${cut ? `.${cut}` : ''} +0000 UTC`;
}

/**
 * Did this pass go through Running? KubeVirt moves one phase per pass and annotates on the pass
 * that starts Running; ours may take several steps in one pass (phases.ts), so a pass that
 * reached Running (and went on, to Succeeded say) is one KubeVirt would have annotated on. A
 * failed pass is not: KubeVirt fails the migration before it looks at the phase.
 */
function wentThroughRunning(migration: VirtualMachineInstanceMigration, result: Pick<PhaseResult, 'phase' | 'steps'>): boolean {
  if (result.phase === 'Failed') return false;
  return migration.status?.phase === 'Running' || result.steps.includes('Running');
}

/** The patch that annotates the target pod with the target-ready time, or undefined when none is due. */
export function targetReadyAnnotationPatch(
  migration: VirtualMachineInstanceMigration,
  vmi: VirtualMachineInstance,
  targetPod: V1Pod | undefined,
  result: Pick<PhaseResult, 'phase' | 'steps'>,
): JsonPatchOperation[] | undefined {
  if (!wentThroughRunning(migration, result) || !targetPod) return undefined;
  // KubeVirt's IsLocalOrDecentralizedTarget: only the sending half of a decentralized pair skips it.
  if (migration.spec.sendTo !== undefined && migration.spec.receive === undefined) return undefined;
  const ready = vmi.status?.migrationState?.targetNodeDomainReadyTimestamp;
  if (!ready || MIGRATION_TARGET_READY_TIMESTAMP_ANNOTATION in (targetPod.metadata?.annotations ?? {})) return undefined;
  const value = goTimeString(ready);
  // A pod without annotations has no map to add a key to: the whole map is added instead.
  if (!targetPod.metadata?.annotations) return [{ op: 'add', path: '/metadata/annotations', value: { [MIGRATION_TARGET_READY_TIMESTAMP_ANNOTATION]: value } }];
  return [{ op: 'add', path: `/metadata/annotations/${escapeJsonPointer(MIGRATION_TARGET_READY_TIMESTAMP_ANNOTATION)}`, value }];
}
