/**
 * The terminal view of a running `up`: keys queued, reconciles, VMIs by phase — one line a
 * second, rewritten in place on a terminal, printed every few seconds otherwise.
 */
import { CONTROLLERS } from '../shared/controllers.ts';
import type { LocalRuntime } from './runtime.ts';

export interface Snapshot {
  readonly phases: Record<string, number>;
  readonly queued: number;
  readonly inFlight: number;
  readonly deadLettered: number;
  readonly reconciles: number;
  readonly errors: number;
  readonly relayPending: number;
}

export async function snapshot(rt: LocalRuntime, vmiPhases: () => Promise<Record<string, number>>): Promise<Snapshot> {
  let queued = 0;
  let inFlight = 0;
  let deadLettered = 0;
  for (const c of CONTROLLERS) {
    const d = await rt.queue.depth(c);
    queued += d.visible + d.delayed;
    inFlight += d.inFlight;
    deadLettered += d.deadLettered;
  }
  return {
    phases: await vmiPhases(),
    queued,
    inFlight,
    deadLettered,
    reconciles: rt.metrics.total('reconcile_total'),
    errors: rt.metrics.total('reconcile_total', { result: 'retrying' }) + rt.metrics.total('reconcile_total', { result: 'dead-lettered' }),
    relayPending: rt.relay.pending,
  };
}

export function formatSnapshot(s: Snapshot): string {
  const phases = Object.entries(s.phases).sort().map(([p, n]) => `${p || 'New'} ${n}`).join(', ') || 'none';
  return `VMIs: ${phases} | queued ${s.queued}, in flight ${s.inFlight}, dead-lettered ${s.deadLettered} | reconciles ${s.reconciles} (retries/DLQ ${s.errors})`;
}
