/**
 * What virt-api's `stop` subresource asks of a VirtualMachine, as a pure function (the same
 * reading of virtctl the VM e2e test uses): the legacy `running` field flips to false; `Manual`
 * and `RerunOnFailure` get a `Stop` state-change request for the current VMI; every other run
 * strategy becomes `Halted`. A VM with no VMI under `Halted` (or `running: false`) is not running:
 * 409, as virt-api answers.
 */
export interface StopTarget {
  spec?: { running?: boolean; runStrategy?: string };
  status?: { stateChangeRequests?: unknown[] };
  metadata?: { name?: string; resourceVersion?: string };
}

export type StopAction =
  | { kind: 'spec'; patch: Record<string, unknown> }
  | { kind: 'request'; stateChangeRequests: unknown[] }
  | { kind: 'refuse'; code: number; message: string };

export function stopAction(vm: StopTarget, vmiUid: string | undefined): StopAction {
  const name = vm.metadata?.name ?? '';
  const running = vm.spec?.running;
  const notRunning: StopAction = { kind: 'refuse', code: 409, message: `VM ${name} is not running` };
  if (running !== undefined && running !== null) {
    if (running === false && !vmiUid) return notRunning;
    return { kind: 'spec', patch: { running: false } };
  }
  const strategy = vm.spec?.runStrategy ?? 'Halted';
  if (strategy === 'Manual' || strategy === 'RerunOnFailure') {
    if (!vmiUid) return notRunning;
    return { kind: 'request', stateChangeRequests: [{ action: 'Stop', uid: vmiUid }] };
  }
  if (strategy === 'Halted' && !vmiUid) return notRunning;
  return { kind: 'spec', patch: { runStrategy: 'Halted' } };
}
