/**
 * The guest agent's answer to virt-handler's freeze and thaw, as pure functions: a running VMI
 * with a connected agent (`AgentConnected` condition) freezes (`status.fsFreezeStatus="frozen"`)
 * and thaws (the field cleared); without an agent, or when a test injected a failure, the call
 * fails with the error virt-handler would relay. Whether a VMI has an agent is the
 * {@link NO_GUEST_AGENT_ANNOTATION} test knob (virt-handler then reports no AgentConnected).
 */
import { conditionOf, type Vmi } from './objects.ts';

/** Set to "true" on a VMI (or its VM template) to boot it without a guest agent. */
export const NO_GUEST_AGENT_ANNOTATION = 'sandbox.virt-reconciler.io/no-guest-agent';

/** The status change, or the error (HTTP code + message) the subresource answers with. */
export type AgentAnswer = { status: Record<string, unknown> } | { code: number; message: string };

function runningWithAgent(vmi: Vmi | undefined): AgentAnswer | undefined {
  if (!vmi) return { code: 404, message: 'virtualmachineinstance not found' };
  if (vmi.status?.phase !== 'Running') return { code: 409, message: 'VMI is not running' };
  if (!conditionOf(vmi.status?.conditions, 'AgentConnected')) return { code: 500, message: 'Guest agent is not responding' };
  return undefined;
}

export function freezeAnswer(vmi: Vmi | undefined, failure: string | undefined): AgentAnswer {
  const refused = runningWithAgent(vmi);
  if (refused) return refused;
  if (failure !== undefined) return { code: 500, message: failure };
  return { status: { fsFreezeStatus: 'frozen' } };
}

export function unfreezeAnswer(vmi: Vmi | undefined, failure: string | undefined): AgentAnswer {
  const refused = runningWithAgent(vmi);
  if (refused) return refused;
  if (failure !== undefined) return { code: 500, message: failure };
  // null: the merge patch removes the field, as the handler reports a thawed guest.
  return { status: { fsFreezeStatus: null } };
}
