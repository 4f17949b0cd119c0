/**
 * virt-api's `pause` and `unpause` subresources of a VMI and what virt-handler then writes, as a
 * pure function. virt-api refuses (pkg/virt-api/rest/lifecycle.go): a VMI not Running (409 "VM is
 * not running" / "VMI is not running"), a pause of a VMI with a liveness probe other than the
 * guest-agent ping (403), a pause of a paused VMI (409 "VMI is already paused"), an unpause of one
 * that is not (409 "VMI is not paused"), an unpause while the VM's snapshot is in progress (409).
 * Otherwise virt-handler pauses or resumes the domain and its next status update adds the VMI's
 * `Paused` condition (`PausedByUser`, "VMI was paused by user", both times now) or removes it
 * (pkg/virt-handler/vm.go). The condition is the only trace in the API: the VMI controller turns
 * it into the launcher pod's readiness gate, the VM controller into `Paused`.
 */
import type { JsonPatchOp } from '../nodes/conditions-patch.ts';
import type { Vmi } from '../nodes/objects.ts';

export type PauseAnswer = { readonly code: number; readonly message: string } | { readonly ops: JsonPatchOp[] };

const conflict = (name: string, why: string) => ({ code: 409, message: `Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "${name}": ${why}` });

/** `verb` of `vmi` (undefined: not found); `snapshotInProgress`: the VM's `status.snapshotInProgress` is set. */
export function pauseAnswer(verb: 'pause' | 'unpause', vmi: Vmi | undefined, name: string, nowIso: string, snapshotInProgress = false): PauseAnswer {
  if (verb === 'unpause' && snapshotInProgress) return { code: 409, message: `Operation cannot be fulfilled on virtualmachine.kubevirt.io "${name}": VM snapshot is in progress` };
  if (!vmi) return { code: 404, message: `virtualmachineinstance.kubevirt.io "${name}" not found` };
  const conditions = vmi.status?.conditions ?? [];
  const at = conditions.findIndex((c) => c.type === 'Paused');
  const rv = vmi.metadata?.resourceVersion;
  if (verb === 'pause') {
    if (vmi.status?.phase !== 'Running') return conflict(name, 'VM is not running');
    const probe = (vmi.spec as { livenessProbe?: { guestAgentPing?: unknown } } | undefined)?.livenessProbe;
    if (probe && probe.guestAgentPing === undefined) return { code: 403, message: `virtualmachineinstance.kubevirt.io "${name}" is forbidden: Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported` };
    if (at >= 0) return conflict(name, 'VMI is already paused');
    const paused = { type: 'Paused', status: 'True', lastProbeTime: nowIso, lastTransitionTime: nowIso, reason: 'PausedByUser', message: 'VMI was paused by user' };
    return {
      ops: [
        { op: 'test', path: '/metadata/resourceVersion', value: rv },
        vmi.status?.conditions ? { op: 'add', path: '/status/conditions/-', value: paused } : { op: 'add', path: '/status/conditions', value: [paused] },
      ],
    };
  }
  if (vmi.status?.phase !== 'Running') return conflict(name, 'VMI is not running');
  if (at < 0) return conflict(name, 'VMI is not paused');
  return {
    ops: [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'remove', path: `/status/conditions/${at}` },
    ],
  };
}
