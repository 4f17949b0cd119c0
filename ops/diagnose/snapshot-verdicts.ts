/**
 * "A snapshot that does not become ready" (issue 18), as pure verdicts over gathered evidence
 * (snapshot-evidence.ts): the key dead-lettered; the snapshot Failed (its deadline, its
 * condition); its source VM missing; an error on the snapshot or its content (a VolumeSnapshot's
 * error, a VolumeSnapshotClass gone); the source lock not taken (the Progressing reason says why);
 * VolumeSnapshots not ready yet, with when the failure deadline fires. Pure.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { deadLetterFinding, diagnosis, humanSeconds, note, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceFindings } from './trace-checks.ts';
import type { ConditionView } from './views.ts';

export interface SnapshotView {
  readonly name: string;
  readonly resourceVersion: string;
  readonly phase: string;
  readonly readyToUse: boolean;
  readonly sourceKind: string;
  readonly sourceName: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Milliseconds; 0 = no deadline. */
  readonly deadlineMs: number;
  readonly error?: string;
  readonly conditions: readonly ConditionView[];
  readonly contentName?: string;
}

export interface SnapshotEvidence {
  readonly now: number;
  readonly key: string;
  readonly snapshot?: SnapshotView;
  readonly sourceExists: boolean;
  /** The content's error and its VolumeSnapshots that are not ready (name, error). */
  readonly content?: { readonly error?: string; readonly unready: readonly { readonly name: string; readonly error?: string }[] };
  readonly deadLetters: readonly DeadLetter[];
  readonly traces: readonly TraceEntry[];
}

const PREFIX = 'snapshot not ready: ';

export function diagnoseSnapshot(e: SnapshotEvidence): Diagnosis {
  const target = `snapshot/${e.key}`;
  const s = e.snapshot;
  const letters = e.deadLetters.map((d) => deadLetterFinding(s?.phase === 'Succeeded' ? '' : PREFIX, d, e.now));
  if (!s) return diagnosis(target, [problem('not-found', `not found: VirtualMachineSnapshot ${e.key} does not exist`), ...letters], '');
  const findings: Finding[] = [...letters];
  const progressing = s.conditions.find((c) => c.type === 'Progressing');
  const age = humanSeconds((e.now - s.createdAt) / 1000);
  const deadline = s.deadlineMs > 0 ? ` (failure deadline in ${humanSeconds((s.createdAt + s.deadlineMs - e.now) / 1000)})` : '';
  if (s.phase === 'Failed') {
    const failure = s.conditions.find((c) => c.type === 'Failure' && c.status === 'True') ?? progressing;
    findings.push(problem('failed', `snapshot Failed: ${[failure?.reason, failure?.message].filter(Boolean).join(': ') || 'no condition says why'}`, s.error ? [`error: ${s.error}`] : []));
  } else if (s.phase !== 'Succeeded' && s.phase !== 'Deleting') {
    if (!e.sourceExists) findings.push(problem('source-missing', `${PREFIX}its source ${s.sourceKind} ${e.key.split('/')[0]}/${s.sourceName} does not exist`, [], 'create the VM, or delete the snapshot: it fails at its deadline'));
    const error = s.error ?? e.content?.error;
    if (error) findings.push(problem('error', `${PREFIX}${error}${deadline}`, e.content?.unready.filter((v) => v.error).map((v) => `VolumeSnapshot ${v.name}: ${v.error}`) ?? []));
    if (progressing?.status === 'False' && progressing.reason && progressing.reason !== 'In error state') {
      findings.push(problem('not-progressing', `${PREFIX}${progressing.reason}${progressing.message ? `: ${progressing.message}` : ''}${deadline}`));
    }
    const unready = e.content?.unready ?? [];
    if (findings.filter((f) => f.severity === 'problem').length === 0 && unready.length > 0) {
      const summary = `${unready.length} VolumeSnapshot${unready.length === 1 ? ' is' : 's are'} not ready to use (${unready.map((v) => v.name).join(', ')})${deadline}`;
      findings.push(e.now - s.createdAt > 60_000 ? problem('volume-snapshots', `${PREFIX}${summary}`, [`in progress for ${age}`], 'the CSI driver makes them ready: check its snapshotter and the VolumeSnapshotContents') : note('volume-snapshots', summary));
    }
  }
  const traced = { kind: 'VirtualMachineSnapshot', label: 'snapshot', resource: 'virtualmachinesnapshots', name: s.name, resourceVersion: s.resourceVersion };
  findings.push(...traceFindings(e.traces, traced, e.now));
  const state = s.phase === 'Succeeded' ? `Succeeded${s.readyToUse ? ', ready to use' : ''}` : `${s.phase || 'new'} for ${age}${deadline}`;
  return diagnosis(target, findings, `snapshot ${e.key} is ${state}${s.contentName ? ` (content ${s.contentName})` : ''}`);
}
