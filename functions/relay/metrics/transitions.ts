/**
 * KubeVirt's phase-transition histograms, observed where KubeVirt observes them: on a watch update
 * whose phase differs from the one seen before (its informer's UpdateFunc), with the times the
 * object's own `phaseTransitionTimestamps` give — never the relay's clock, so a relay that
 * restarts or lags records the same durations.
 */
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import { TRANSITIONS } from '../../../shared/metrics/kubevirt/catalog.ts';
import { observeMetric } from '../../../shared/metrics/kubevirt/record.ts';

interface PhaseTimestamp {
  readonly phase?: string;
  readonly phaseTransitionTimestamp?: unknown;
}

/** What a transition reads of the new object. */
export interface PhasedObject {
  readonly metadata?: { readonly creationTimestamp?: unknown; readonly deletionTimestamp?: unknown };
  readonly status?: { readonly phase?: string; readonly phaseTransitionTimestamps?: readonly PhaseTimestamp[] };
}

function ms(t: unknown): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const v = t instanceof Date ? t.getTime() : Date.parse(String(t));
  return Number.isNaN(v) ? undefined : v;
}

/** Seconds from `from` to `to`, floored at 0 (fast transitions meet clock skew); undefined when either is missing. */
function seconds(from: number | undefined, to: number | undefined): number | undefined {
  if (from === undefined || to === undefined) return undefined;
  return Math.max(0, (to - from) / 1000);
}

/** The three VMI histograms for one update from `oldPhase` to the phase of `vmi`. */
export function observeVmiTransition(reg: MetricsRegistry, oldPhase: string, vmi: PhasedObject): void {
  const phase = vmi.status?.phase ?? '';
  if (oldPhase === phase) return;
  const stamps = vmi.status?.phaseTransitionTimestamps ?? [];
  const created = ms(vmi.metadata?.creationTimestamp);
  // The first stamp of the new phase, and of the old one (an unset old phase starts at creation).
  let newTime: number | undefined;
  let oldTime: number | undefined = oldPhase === '' ? created : undefined;
  for (const s of stamps) {
    if (newTime === undefined && s.phase === phase) newTime = ms(s.phaseTransitionTimestamp);
    else if (oldTime === undefined && s.phase === oldPhase) oldTime = ms(s.phaseTransitionTimestamp);
    else if (oldTime !== undefined && newTime !== undefined) break;
  }
  const between = seconds(oldTime, newTime);
  if (between !== undefined) observeMetric(reg, TRANSITIONS.vmiPhase, { phase, last_phase: oldPhase }, between);
  const fromCreation = seconds(created, newTime);
  if (fromCreation !== undefined) observeMetric(reg, TRANSITIONS.vmiFromCreation, { phase }, fromCreation);

  // From deletion: only a VMI being deleted that reached a final phase.
  const deleting = ms(vmi.metadata?.deletionTimestamp);
  if (deleting === undefined || (phase !== 'Succeeded' && phase !== 'Failed')) return;
  const fromDeletion = seconds(oldPhase === '' ? created : deleting, newTime);
  if (fromDeletion !== undefined) observeMetric(reg, TRANSITIONS.vmiFromDeletion, { phase }, fromDeletion);
}

/** The migration histogram for one update from `oldPhase`: creation to the (first run of the) new phase's stamp. */
export function observeMigrationTransition(reg: MetricsRegistry, oldPhase: string, m: PhasedObject): void {
  const phase = m.status?.phase ?? '';
  if (oldPhase === phase) return;
  let newTime: number | undefined;
  for (const s of m.status?.phaseTransitionTimestamps ?? []) {
    if (s.phase === phase) newTime = ms(s.phaseTransitionTimestamp);
    else if (newTime !== undefined) break;
  }
  const d = seconds(ms(m.metadata?.creationTimestamp), newTime);
  if (d !== undefined) observeMetric(reg, TRANSITIONS.migrationFromCreation, { phase }, d);
}
