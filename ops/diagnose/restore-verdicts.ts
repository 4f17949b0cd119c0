/**
 * "A restore that does not complete" (issue 15), as pure verdicts over gathered evidence
 * (restore-evidence.ts): the key dead-lettered; the restore Failed (its Failure reason); its
 * conditions False with the controller's reason (the target VM still running, a snapshot not
 * ready or missing, an error); another restore holding the target VM; restored claims not bound
 * yet; in progress for long. Pure.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { deadLetterFinding, diagnosis, humanSeconds, note, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceFindings } from './trace-checks.ts';
import type { ConditionView } from './views.ts';

export interface RestoreView {
  readonly name: string;
  readonly resourceVersion: string;
  readonly complete: boolean;
  readonly deleting: boolean;
  readonly targetName: string;
  readonly snapshotName: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly conditions: readonly ConditionView[];
}

export interface RestoreEvidence {
  readonly now: number;
  readonly key: string;
  readonly restore?: RestoreView;
  /** The target VM's `status.restoreInProgress` (undefined: the VM is missing or not held). */
  readonly targetHeldBy?: string;
  /** Restored claims (`status.restores`) that are not Bound: name and phase ('' when missing). */
  readonly unboundClaims: readonly { readonly name: string; readonly phase: string }[];
  readonly deadLetters: readonly DeadLetter[];
  readonly traces: readonly TraceEntry[];
}

const PREFIX = 'restore not complete: ';
/** How long a restore may be in progress before it is reported as stuck. */
const SLOW_MS = 120_000;

export function diagnoseRestore(e: RestoreEvidence): Diagnosis {
  const target = `restore/${e.key}`;
  const r = e.restore;
  const letters = e.deadLetters.map((d) => deadLetterFinding(r?.complete ? '' : PREFIX, d, e.now));
  if (!r) return diagnosis(target, [problem('not-found', `not found: VirtualMachineRestore ${e.key} does not exist`), ...letters], '');
  const findings: Finding[] = [...letters];
  const ns = e.key.split('/')[0] ?? '';
  const age = humanSeconds((e.now - r.createdAt) / 1000);
  const progressing = r.conditions.find((c) => c.type === 'Progressing');
  const failure = r.conditions.find((c) => c.type === 'Failure' && c.status === 'True');
  if (failure) {
    findings.push(problem('failed', `restore Failed: ${failure.reason || 'no reason given'}`, [], 'a failed restore is never retried: stop the target VM and create a new restore'));
  } else if (!r.complete && !r.deleting) {
    if (e.targetHeldBy && e.targetHeldBy !== r.name) findings.push(problem('target-held', `${PREFIX}the target VM ${ns}/${r.targetName} is held by restore ${e.targetHeldBy}`, [], 'that restore must complete or be deleted first'));
    if (progressing?.status === 'False' && progressing.reason) {
      const waiting = progressing.reason.startsWith('Waiting for target VM to be powered off');
      findings.push(problem(waiting ? 'target-running' : 'not-progressing', `${PREFIX}${progressing.reason}`, [`for ${age}`], waiting ? `stop the VM ${ns}/${r.targetName} (virtctl stop), or use targetReadinessPolicy StopTarget` : undefined));
    }
    const unbound = e.unboundClaims.map((c) => `PVC ${ns}/${c.name}: ${c.phase || 'missing'}`);
    if (findings.filter((f) => f.severity === 'problem').length === 0) {
      const summary = `in progress: ${progressing?.reason ?? 'not started'}`;
      findings.push(e.now - r.createdAt > SLOW_MS ? problem('slow', `${PREFIX}${summary} for ${age}`, unbound, unbound.length ? 'the restored claims bind once their VolumeSnapshots are ready: check the CSI driver and provisioner' : undefined) : note('in-progress', summary, unbound));
    }
  }
  const traced = { kind: 'VirtualMachineRestore', label: 'restore', resource: 'virtualmachinerestores', name: r.name, resourceVersion: r.resourceVersion };
  findings.push(...traceFindings(e.traces, traced, e.now));
  const state = r.complete ? 'complete' : r.deleting ? 'deleting' : `in progress for ${age}`;
  return diagnosis(target, findings, `restore ${e.key} of snapshot ${r.snapshotName} into VM ${r.targetName} is ${state}`);
}
