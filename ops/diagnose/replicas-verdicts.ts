/**
 * "A replica set short of replicas" (issue 18, beyond the seed's three symptoms), for both owners
 * of replicas: a VirtualMachineInstanceReplicaSet (its replicas are VMIs) and a
 * VirtualMachinePool (its replicas are VMs). Pure verdicts over gathered evidence
 * (replicas-evidence.ts), in the order the operator needs them: the owner's key dead-lettered;
 * paused; creating replicas failing (the `ReplicaFailure` condition, `FailedCreate` events); the
 * controller waiting on its create/delete expectations; and otherwise the first replica that is
 * not ready, with that replica's own diagnosis (so "no launcher pod: PVC … is Pending" names the
 * cause on the first line). The trace checks every object gets follow.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import { EXPECTATIONS_TIMEOUT_MS, isExpectationSatisfied, type ExpectationRecord } from '../../shared/state/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import { deadLetterFinding, diagnosis, humanSeconds, note, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceFindings, traceLine } from './trace-checks.ts';
import type { ConditionView, EventView } from './views.ts';

/** What differs between the two owners of replicas. */
export interface ReplicaOwnerKind {
  /** The target's short kind: `replicaset`, `pool`. */
  readonly target: string;
  /** `VirtualMachineInstanceReplicaSet`, `VirtualMachinePool`: the trace cause's kind. */
  readonly kind: string;
  /** "replica set", "pool": how the verdicts name the owner. */
  readonly label: string;
  /** Plural resource the owner's writes go to. */
  readonly resource: string;
  /** "VMI", "VM": how the verdicts name a replica. */
  readonly replicaLabel: string;
}

export const REPLICA_SET_KIND: ReplicaOwnerKind = { target: 'replicaset', kind: 'VirtualMachineInstanceReplicaSet', label: 'replica set', resource: 'virtualmachineinstancereplicasets', replicaLabel: 'VMI' };
export const POOL_KIND: ReplicaOwnerKind = { target: 'pool', kind: 'VirtualMachinePool', label: 'pool', resource: 'virtualmachinepools', replicaLabel: 'VM' };

export interface ReplicaOwnerView {
  readonly name: string;
  readonly resourceVersion: string;
  /** `spec.replicas` (1 when unset, as both controllers read it). */
  readonly desired: number;
  readonly paused: boolean;
  readonly deleting: boolean;
  readonly conditions: readonly ConditionView[];
}

/** One replica the owner controls. */
export interface ReplicaView {
  readonly name: string;
  readonly ready: boolean;
  /** The VMI's phase, or the VM's printable status. */
  readonly state: string;
  readonly deleting: boolean;
}

/** A named expectation record of the owner's controller. */
export interface OwnerExpectation {
  /** `rs-vmis`, `pool-vm-creations`, … */
  readonly name: string;
  readonly record: ExpectationRecord;
}

export interface ReplicasEvidence {
  readonly now: number;
  readonly key: string;
  readonly owner?: ReplicaOwnerView;
  /** Replicas controlled by the owner (by owner reference), in name order. */
  readonly replicas: readonly ReplicaView[];
  readonly deadLetters: readonly DeadLetter[];
  readonly traces: readonly TraceEntry[];
  readonly expectations: readonly OwnerExpectation[];
  /** Events about the owner, oldest first. */
  readonly events: readonly EventView[];
  /** The diagnosis of the first replica that is not ready (gathered only when there is one). */
  readonly firstUnready?: Diagnosis;
}

/** Event reasons that say creating or deleting a replica failed. */
const FAILED_EVENTS = new Set(['FailedCreate', 'FailedDelete', 'FailedUpdate']);

export function diagnoseReplicas(kind: ReplicaOwnerKind, e: ReplicasEvidence): Diagnosis {
  const target = `${kind.target}/${e.key}`;
  const o = e.owner;
  const live = e.replicas.filter((r) => !r.deleting);
  const ready = live.filter((r) => r.ready).length;
  const short = o ? ready < o.desired : false;
  const prefix = o && short ? `${kind.label} short of replicas (${ready} of ${o.desired} ready): ` : '';
  const letters = e.deadLetters.map((d) => deadLetterFinding(prefix, d, e.now));
  if (!o) return diagnosis(target, [problem('not-found', `not found: ${kind.kind} ${e.key} does not exist`), ...letters], '');
  const findings: Finding[] = [...letters];
  if (o.deleting) findings.push(note('deleting', `${kind.label} ${e.key} is being deleted`));
  if (short && !o.deleting) findings.push(...shortFindings(kind, e, o, prefix, live.length));
  else if (live.length > o.desired) findings.push(note('surplus', `${live.length} ${kind.replicaLabel}s for ${o.desired} wanted: the controller deletes the surplus`));
  const traced = { kind: kind.kind, label: kind.label, resource: kind.resource, name: o.name, resourceVersion: o.resourceVersion };
  findings.push(...traceFindings(e.traces, traced, e.now));
  return diagnosis(target, findings, `${kind.label} ${e.key} has ${ready} of ${o.desired} replicas ready${o.paused ? ' (paused)' : ''}`);
}

/** Why the owner has fewer ready replicas than it wants; the first finding is the verdict. */
function shortFindings(kind: ReplicaOwnerKind, e: ReplicasEvidence, o: ReplicaOwnerView, prefix: string, existing: number): Finding[] {
  const out: Finding[] = [];
  const last = e.traces.at(-1);
  if (o.paused) out.push(problem('paused', `${prefix}${kind.label} ${e.key} is paused (spec.paused): the controller creates and deletes no ${kind.replicaLabel}s`, [], `kubectl patch ${kind.resource} ${o.name} --type merge -p '{"spec":{"paused":false}}'`));
  const failure = o.conditions.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const failedEvent = e.events.filter((ev) => ev.type === 'Warning' && FAILED_EVENTS.has(ev.reason)).at(-1);
  if (failure || failedEvent) {
    const why = failure ? `${failure.reason ?? 'ReplicaFailure'}: ${failure.message ?? ''}` : `${failedEvent!.reason}: ${failedEvent!.message}`;
    const evidence = [
      ...(failure ? [`condition ReplicaFailure=True, ${failure.reason ?? ''}: ${failure.message ?? ''}`] : []),
      ...(failedEvent ? [`Warning ${failedEvent.reason} ×${failedEvent.count}, last ${humanSeconds((e.now - failedEvent.lastAt) / 1000)} ago: ${failedEvent.message}`] : []),
    ];
    out.push(problem('replica-failure', `${prefix}${kind.replicaLabel} writes fail: ${why}`, evidence));
  }
  for (const x of e.expectations) {
    if (isExpectationSatisfied(x.record, e.now)) continue;
    const pending = [x.record.add > 0 ? `${x.record.add} create${x.record.add === 1 ? '' : 's'}` : '', x.record.del > 0 ? `${x.record.del} deletion${x.record.del === 1 ? '' : 's'}` : ''].filter(Boolean).join(' and ');
    const expires = humanSeconds((x.record.setAt + EXPECTATIONS_TIMEOUT_MS - e.now) / 1000);
    out.push(problem('expectation', `${prefix}waiting on ${pending} not yet seen (expectation ${x.name} set ${humanSeconds((e.now - x.record.setAt) / 1000)} ago); it expires in ${expires}`, last ? [traceLine(last, e.now)] : [], 'if the relay is not delivering the replicas\' events, the controller waits until the expectation expires'));
  }
  if (existing < o.desired && out.length === 0) {
    // Fewer replicas exist than wanted, and nothing says why: the controller has not acted.
    const detail = !last ? 'no reconcile of it is recorded (is the relay running?)' : last.outcome.kind === 'retry' ? `reconciles keep failing: ${last.outcome.reason}: ${last.outcome.message}` : `the last reconcile ended ${outcomeText(last.outcome)}`;
    out.push(problem(last?.outcome.kind === 'retry' ? 'failing' : 'no-replicas', `${prefix}${existing} ${kind.replicaLabel}${existing === 1 ? ' exists' : 's exist'}; ${detail}`, last ? [traceLine(last, e.now)] : []));
  }
  const unready = e.replicas.find((r) => !r.deleting && !r.ready);
  if (unready) {
    // The replica's own first problem names the cause; a replica that is merely starting is a note.
    const d = e.firstUnready;
    if (d && !d.healthy) out.push({ ...d.findings[0]!, summary: `${prefix}${kind.replicaLabel} ${unready.name}: ${d.verdict}`, evidence: [`${kind.replicaLabel} ${unready.name} is ${unready.state || 'not ready'}`, ...d.findings[0]!.evidence] });
    else out.push(note('replica-starting', `${kind.replicaLabel} ${unready.name} is ${unready.state || 'not ready'} (not ready yet)`, d ? [d.verdict] : []));
  }
  return out;
}
