/**
 * A VM's diagnosis: its own controller's evidence (a dead-lettered key, a VM that should run but
 * has no VMI, a Failure condition, the trace checks) followed by its VMI's diagnosis
 * (vmi-verdicts.ts) when it has one — so "no launcher pod: PVC … does not exist" is the first line
 * for a VM whose VMI waits on a claim. Pure.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import { deadLetterFinding, diagnosis, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceFindings, traceLine } from './trace-checks.ts';
import type { ConditionView } from './views.ts';

export interface VmView {
  readonly name: string;
  readonly resourceVersion: string;
  /** The effective run strategy (`running: true` reads as Always, `false` as Halted). */
  readonly runStrategy: string;
  readonly printableStatus: string;
  readonly conditions: readonly ConditionView[];
}

export interface VmEvidence {
  readonly now: number;
  readonly key: string;
  readonly vm?: VmView;
  readonly deadLetters: readonly DeadLetter[];
  /** The VM controller's recent reconciles of this key, oldest first. */
  readonly traces: readonly TraceEntry[];
  /** The VMI's diagnosis, when the VM has a VMI. */
  readonly vmi?: Diagnosis;
}

/** Strategies under which a VM without a VMI is expected to get one. */
const WANTS_VMI = new Set(['Always', 'RerunOnFailure', 'Once']);

export function diagnoseVm(e: VmEvidence): Diagnosis {
  const target = `vm/${e.key}`;
  const letters = e.deadLetters.map((d) => deadLetterFinding(e.vmi ? '' : 'no VMI: ', d, e.now));
  const vm = e.vm;
  if (!vm) return diagnosis(target, [problem('not-found', `not found: VirtualMachine ${e.key} does not exist`), ...letters], '');
  const findings: Finding[] = [...letters];
  const failure = vm.conditions.find((c) => c.type === 'Failure' && c.status === 'True');
  if (!e.vmi && WANTS_VMI.has(vm.runStrategy)) {
    const last = e.traces.at(-1);
    const detail = failure ? `${failure.reason ?? 'Failure'}: ${failure.message ?? ''}` : last ? `the last reconcile ended ${outcomeText(last.outcome)}` : 'no reconcile of it is recorded (is the relay running?)';
    findings.push(problem('no-vmi', `no VMI: VM ${e.key} is ${vm.runStrategy} but has no VMI; ${detail}`, last ? [traceLine(last, e.now)] : []));
  } else if (failure) {
    findings.push(problem('failure-condition', `VM ${e.key} reports Failure: ${failure.reason ?? ''}: ${failure.message ?? ''}`));
  }
  const traced = { kind: 'VirtualMachine', label: 'VM', resource: 'virtualmachines', name: vm.name, resourceVersion: vm.resourceVersion };
  findings.push(...traceFindings(e.traces, traced, e.now));
  // The VMI's problems are the VM's too; its notes stay with it.
  if (e.vmi) findings.push(...e.vmi.findings);
  const vmiPart = e.vmi ? (e.vmi.healthy ? `; ${e.vmi.verdict.replace(/^healthy: /, '')}` : '') : '; no VMI';
  return diagnosis(target, findings, `vm ${e.key} is ${vm.printableStatus || 'unknown'} (${vm.runStrategy})${vmiPart}`);
}
