/**
 * virt-handler's node heartbeat, as `pkg/virt-handler/heartbeat` runs it (reference
 * node-drain-updates §1.5): every minute, jitter factor 1.2, sliding — the next beat is due
 * 60 s + rand × 72 s after the previous one finished, so up to 2m12s apart. Each beat merge-patches
 * the Node with the annotation `kubevirt.io/heartbeat` (the JSON time) and the label
 * `kubevirt.io/schedulable: "true"`.
 */

export const HEARTBEAT_ANNOTATION = 'kubevirt.io/heartbeat';
export const SCHEDULABLE_LABEL = 'kubevirt.io/schedulable';

/** One minute, as virt-handler's heartbeat period. */
export const HEARTBEAT_PERIOD_MS = 60_000;
/** wait.JitterUntil's jitter factor in virt-handler. */
export const HEARTBEAT_JITTER = 1.2;

/** Milliseconds until the next beat; `random` in [0, 1). */
export function nextBeatDelayMs(random: number): number {
  return HEARTBEAT_PERIOD_MS + random * HEARTBEAT_JITTER * HEARTBEAT_PERIOD_MS;
}

/** The merge patch one beat sends; `schedulable` is false only while the handler shuts down. */
export function heartbeatPatch(nowIso: string, schedulable = true): object {
  return { metadata: { annotations: { [HEARTBEAT_ANNOTATION]: nowIso }, labels: { [SCHEDULABLE_LABEL]: schedulable ? 'true' : 'false' } } };
}
