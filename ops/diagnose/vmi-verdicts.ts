/**
 * The seed's symptoms for a VMI, as pure verdicts over gathered evidence (vmi-evidence.ts):
 * 1. a VMI exists but no launcher pod is created — a dead-lettered key, a missing or unready
 *    PVC / DataVolume, an invalid spec (network…) the controller reported, an unsatisfied pod
 *    expectation, reconciles that keep failing;
 * 3. the pod exists but the status is off — trace-checks.ts (conflicts, expectation waits, relay lag).
 * A launcher pod the scheduler cannot place is reported with the scheduler's message.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import { EXPECTATIONS_TIMEOUT_MS, type ExpectationRecord } from '../../shared/state/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import type { ConditionView, EventView, PodView } from './views.ts';
import { traceFindings, traceLine } from './trace-checks.ts';
import { deadLetterFinding, diagnosis, humanSeconds, problem, type Diagnosis, type Finding } from './finding.ts';

/** A volume's claim: a PVC, or a DataVolume (which makes a PVC of its name). */
export interface ClaimView {
  readonly volume: string;
  readonly kind: 'pvc' | 'dataVolume';
  /** `namespace/name`. */
  readonly name: string;
  readonly pvc?: { readonly phase: string; readonly storageClass?: string };
  /** The StorageClass's volumeBindingMode, when the class could be read. */
  readonly bindingMode?: string;
  readonly dataVolume?: { readonly phase: string; readonly progress?: string; readonly message?: string };
}

export interface VmiView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly phase: string;
  readonly nodeName?: string;
  readonly deleting: boolean;
  readonly conditions: readonly ConditionView[];
}

/** Everything the VMI verdicts look at, read at `now`. */
export interface VmiEvidence {
  readonly now: number;
  /** `namespace/name`. */
  readonly key: string;
  readonly vmi?: VmiView;
  readonly pods: readonly PodView[];
  readonly claims: readonly ClaimView[];
  /** Events about the VMI, oldest first. */
  readonly events: readonly EventView[];
  /** Dead letters of this key (any controller). */
  readonly deadLetters: readonly DeadLetter[];
  /** The VMI controller's pod expectation (`vmi-pods`), if any. */
  readonly expectation?: ExpectationRecord;
  /** The VMI controller's recent reconciles of this key, oldest first. */
  readonly traces: readonly TraceEntry[];
}

const FINAL = new Set(['Succeeded', 'Failed']);

/** The diagnosis of one VMI. */
export function diagnoseVmi(e: VmiEvidence): Diagnosis {
  const target = `vmi/${e.key}`;
  if (!e.vmi) {
    const letters = e.deadLetters.map((d) => deadLetterFinding('', d, e.now));
    return diagnosis(target, [problem('not-found', `not found: VirtualMachineInstance ${e.key} does not exist`), ...letters], '');
  }
  const traced = { kind: 'VirtualMachineInstance', label: 'VMI', resource: 'virtualmachineinstances', name: e.vmi.name, resourceVersion: e.vmi.resourceVersion };
  const findings = [...launcherFindings(e, e.vmi), ...traceFindings(e.traces, traced, e.now)];
  const pod = e.pods.find((p) => !p.deleting);
  const healthy = `vmi ${e.key} is ${e.vmi.phase || 'Pending'}${e.vmi.nodeName ? ` on ${e.vmi.nodeName}` : ''}${pod ? ` (launcher pod ${pod.name} ${pod.phase})` : ''}`;
  return diagnosis(target, findings, healthy);
}

/** Symptom 1: why there is no launcher pod (or why it does not start). */
function launcherFindings(e: VmiEvidence, vmi: VmiView): Finding[] {
  const live = e.pods.filter((p) => !p.deleting);
  const waitsForPod = live.length === 0 && !vmi.deleting && !FINAL.has(vmi.phase) && !vmi.nodeName;
  const prefix = waitsForPod ? 'no launcher pod: ' : '';
  const out: Finding[] = e.deadLetters.map((d) => deadLetterFinding(prefix, d, e.now));
  if (waitsForPod) {
    out.push(...claimFindings(e.claims, prefix), ...invalidSpecFindings(e, vmi, prefix));
    const expectation = expectationFinding(e, prefix);
    if (expectation) out.push(expectation);
    if (out.length === 0) out.push(stuckFinding(e, prefix));
  }
  for (const pod of live) {
    if (pod.phase !== 'Pending' || pod.scheduled?.status !== 'False') continue;
    const pending = e.claims.filter((c) => c.pvc?.phase === 'Pending').map(claimLine);
    out.push(problem('pod-unschedulable', `launcher pod ${vmi.namespace}/${pod.name} is unschedulable: ${pod.scheduled.message ?? pod.scheduled.reason ?? 'no reason given'}`, [`pending for ${humanSeconds((e.now - pod.createdAt) / 1000)}`, ...pending]));
  }
  return out;
}

function claimLine(c: ClaimView): string {
  const mode = c.pvc?.storageClass ? `StorageClass ${c.pvc.storageClass}${c.bindingMode ? `, ${c.bindingMode}` : ''}` : 'no StorageClass';
  return `PVC ${c.name} is ${c.pvc?.phase ?? 'missing'} (${mode})`;
}

/** A claim the controller waits for: missing, a DataVolume not done, a PVC not bound. */
function claimFindings(claims: readonly ClaimView[], prefix: string): Finding[] {
  const out: Finding[] = [];
  for (const c of claims) {
    const dv = c.dataVolume;
    if (c.kind === 'dataVolume' && !dv && !c.pvc) {
      out.push(problem('missing-claim', `${prefix}DataVolume ${c.name} does not exist (volume ${c.volume})`));
    } else if (dv && dv.phase === 'Failed') {
      out.push(problem('datavolume-failed', `${prefix}DataVolume ${c.name} failed${dv.message ? `: ${dv.message}` : ''}`, [`volume ${c.volume}`]));
    } else if (dv && !['Succeeded', 'PendingPopulation', 'WaitForFirstConsumer'].includes(dv.phase)) {
      out.push(problem('datavolume-not-ready', `${prefix}DataVolume ${c.name} is ${dv.phase || 'not ready'}${dv.progress ? ` (${dv.progress})` : ''}`, [`volume ${c.volume}`, ...(dv.message ? [dv.message] : [])]));
    } else if (!c.pvc && c.kind === 'pvc') {
      out.push(problem('missing-claim', `${prefix}PVC ${c.name} does not exist (volume ${c.volume})`, [], `create the PVC ${c.name}, or fix spec.volumes[${c.volume}]`));
    } else if (c.pvc?.phase === 'Pending') {
      out.push(problem('claim-pending', `${prefix}${claimLine(c)}`, [`volume ${c.volume}`]));
    }
  }
  return out;
}

/** The controller could not render the pod: it says so on the Synchronized condition and in a Warning event. */
function invalidSpecFindings(e: VmiEvidence, vmi: VmiView, prefix: string): Finding[] {
  const sync = vmi.conditions.find((c) => c.type === 'Synchronized' && c.status === 'False');
  const warning = [...e.events].reverse().find((ev) => ev.type === 'Warning' && /failed to render|invalid/i.test(ev.message));
  const message = (sync && /failed to render/.test(sync.message ?? '') ? sync.message : undefined) ?? warning?.message;
  if (!message) return [];
  const field = /spec\.[\w.[\]-]+/.exec(message)?.[0];
  const what = field?.startsWith('spec.networks') || field?.includes('interfaces') ? 'invalid network spec' : 'invalid spec';
  const evidence = [
    ...(sync ? [`condition Synchronized=False ${sync.reason ?? ''}: ${sync.message ?? ''}`] : []),
    ...(warning ? [`event ${warning.reason} (×${warning.count}, last ${humanSeconds((e.now - warning.lastAt) / 1000)} ago): ${warning.message}`] : []),
  ];
  return [problem('invalid-spec', `${prefix}${what}: ${message.replace(/^failed to render launch manifest: /, '')}`, evidence, 'fix the VMI spec: the controller waits for a change to it')];
}

/** An unsatisfied, unexpired pod expectation holds the controller back until it is observed or expires. */
function expectationFinding(e: VmiEvidence, prefix: string): Finding | undefined {
  const x = e.expectation;
  if (!x || (x.add <= 0 && x.del <= 0)) return undefined;
  const age = e.now - x.setAt;
  if (age > EXPECTATIONS_TIMEOUT_MS) return undefined;
  const setter = e.traces.filter((t) => t.receivedAt <= x.setAt + 1000 && t.receivedAt + t.durationMs >= x.setAt - 1000).at(-1);
  const by = setter ? `by a reconcile that ended ${outcomeText(setter.outcome)}` : 'by a reconcile that left no trace (it timed out or crashed)';
  return problem(
    'expectation',
    `${prefix}waiting on a pod expectation set ${humanSeconds(age / 1000)} ago ${by}; it expires in ${humanSeconds((EXPECTATIONS_TIMEOUT_MS - age) / 1000)}`,
    [`vmi-pods ${e.key}: add=${x.add} del=${x.del}, set ${new Date(x.setAt).toISOString()}`],
  );
}

/** Nothing specific found: say what the reconciles did, or that none ran. */
function stuckFinding(e: VmiEvidence, prefix: string): Finding {
  const last = e.traces.at(-1);
  if (!last) return problem('no-reconcile', `${prefix}no reconcile of vmi ${e.key} is recorded: is the relay running, and the VMI controller's queue moving? (virt-reconciler queues)`);
  if (last.outcome.kind === 'retry') {
    return problem('failing', `${prefix}reconciles keep failing: ${last.outcome.reason}: ${last.outcome.message} (attempt ${last.attempt})`, [traceLine(last, e.now)]);
  }
  return problem('no-pod', `${prefix}the last reconcile (${humanSeconds((e.now - last.receivedAt) / 1000)} ago) ended ${outcomeText(last.outcome)} and created none`, [traceLine(last, e.now)]);
}
