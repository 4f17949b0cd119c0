/**
 * How the VMI controller writes what `computeVmi` decided (reference.md §a.4 "Write strategy"):
 * - in the phases virt-handler owns (Scheduled, Running) only a JSON patch with `test` ops on a
 *   few fields, so the controller can never overwrite what the handler wrote meanwhile (and a `test`
 *   of the node the VMI was read on);
 * - otherwise one full update (PUT with the resourceVersion read: a stale read answers 409).
 */
import { isDeepStrictEqual } from 'node:util';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { isHandlerOwned } from './update-status.ts';

export type VmiWrite =
  | { readonly kind: 'none' }
  | { readonly kind: 'update'; readonly vmi: VirtualMachineInstance }
  | { readonly kind: 'patch'; readonly ops: readonly JsonPatchOperation[] };

const PATCHED_FIELDS: readonly (readonly ['metadata' | 'status', string])[] = [
  ['status', 'volumeStatus'],
  ['status', 'conditions'],
  ['status', 'activePods'],
  ['status', 'phase'],
  ['status', 'launcherContainerImageVersion'],
  ['metadata', 'labels'],
  ['metadata', 'finalizers'],
  ['status', 'interfaces'],
  // A receiver VMI whose pod went: its migration recorded failed and over (receiver.ts).
  ['status', 'migrationState'],
];

export function planVmiWrite(original: VirtualMachineInstance, desired: VirtualMachineInstance): VmiWrite {
  if (isHandlerOwned(original.status?.phase)) {
    const ops: JsonPatchOperation[] = [];
    for (const [part, field] of PATCHED_FIELDS) {
      const before = (original[part] as Record<string, unknown> | undefined)?.[field];
      const after = (desired[part] as Record<string, unknown> | undefined)?.[field];
      if (isDeepStrictEqual(before, after)) continue;
      const path = `/${part}/${field}`;
      if (after === undefined) ops.push({ op: 'test', path, value: before }, { op: 'remove', path });
      else if (before === undefined) ops.push({ op: 'add', path, value: after });
      else ops.push({ op: 'test', path, value: before }, { op: 'replace', path, value: after });
    }
    if (ops.length === 0) return { kind: 'none' };
    // Everything the patch says was computed from the pod on the VMI's node as read: its phase, its
    // Ready condition, its active pods. A read of the VMI from before its migration completed,
    // beside its pods read after (a message's view whose VMI watch lagged its pod watch), takes the
    // source pod, terminating or gone, for the VMI's: it wrote `Ready=False/PodTerminating`, which
    // made a replica set replace a running VMI (the soak, seed 65), and `Failed/PodNotExists` (drain
    // chaos, seed 12). The other tests cannot see that (those fields are the same before and after
    // a move), so the node is tested too: a VMI that moved since the read answers a conflict and is
    // read again. KubeVirt sends no such test (its informers lag each other far less); it costs
    // nothing while the node is unchanged, which is all but the instant of a migration's end.
    const node = original.status?.nodeName;
    if (node) ops.unshift({ op: 'test', path: '/status/nodeName', value: node });
    return { kind: 'patch', ops };
  }
  if (onlyPlacementChanged(original, desired)) return { kind: 'none' };
  const same =
    isDeepStrictEqual(original.status, desired.status) &&
    isDeepStrictEqual(original.metadata?.labels, desired.metadata?.labels) &&
    isDeepStrictEqual(original.metadata?.annotations, desired.metadata?.annotations) &&
    isDeepStrictEqual(original.metadata?.finalizers, desired.metadata?.finalizers);
  return same ? { kind: 'none' } : { kind: 'update', vmi: desired };
}

/**
 * While Scheduling, the launcher pod getting bound changes only what is copied from it: the node
 * in `status.activePods` and `status.qosClass`. That alone is not worth a write (it would be the
 * third per VMI): nothing reads them before the hand-off, and the hand-off write that follows once
 * the pod runs records them — as does any other write before then (a condition change, a failure),
 * since each is computed from the pods observed.
 */
function onlyPlacementChanged(original: VirtualMachineInstance, desired: VirtualMachineInstance): boolean {
  if (original.status?.phase !== 'Scheduling' || desired.status?.phase !== 'Scheduling') return false;
  const before = original.status.activePods ?? {};
  const after = desired.status.activePods ?? {};
  const pods = Object.keys(after);
  const podsSame = pods.length === Object.keys(before).length && pods.every((uid) => before[uid] === after[uid] || before[uid] === '');
  const qosSame = original.status.qosClass === desired.status.qosClass || original.status.qosClass === undefined;
  if (!podsSame || !qosSame) return false;
  const { activePods: _a, qosClass: _q, ...restBefore } = original.status;
  const { activePods: _b, qosClass: _r, ...restAfter } = desired.status;
  return (
    isDeepStrictEqual(restBefore, restAfter) &&
    isDeepStrictEqual(original.metadata?.labels, desired.metadata?.labels) &&
    isDeepStrictEqual(original.metadata?.annotations, desired.metadata?.annotations) &&
    isDeepStrictEqual(original.metadata?.finalizers, desired.metadata?.finalizers)
  );
}
