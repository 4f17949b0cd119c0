/**
 * What `virt-reconciler diagnose` concludes: findings with their evidence, the first problem
 * naming the cause on the first line of the output.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';

/** One conclusion of a check. */
export interface Finding {
  /** `problem` makes the diagnosis unhealthy (exit 1); `note` is context shown under it. */
  readonly severity: 'problem' | 'note';
  /** Which check found it (`dead-lettered`, `missing-claim`, `cluster-limit`, …), for scripts. */
  readonly check: string;
  /** One line that names the cause, e.g. "no launcher pod: PVC default/data does not exist". */
  readonly summary: string;
  /** The facts behind it, one per line. */
  readonly evidence: readonly string[];
  /** What to do next, when there is something obvious (a command to run). */
  readonly hint?: string;
}

/** The whole answer for one object. */
export interface Diagnosis {
  /** `vmi/default/testvmi`. */
  readonly target: string;
  readonly healthy: boolean;
  /** The first line: the first problem's summary, or "healthy: …". */
  readonly verdict: string;
  readonly findings: readonly Finding[];
}

export function problem(check: string, summary: string, evidence: readonly string[] = [], hint?: string): Finding {
  return { severity: 'problem', check, summary, evidence, ...(hint ? { hint } : {}) };
}

export function note(check: string, summary: string, evidence: readonly string[] = []): Finding {
  return { severity: 'note', check, summary, evidence };
}

/** Puts findings together: problems first (in check order), then notes; `healthy` when no problem. */
export function diagnosis(target: string, findings: readonly Finding[], healthySummary: string): Diagnosis {
  const problems = findings.filter((f) => f.severity === 'problem');
  const notes = findings.filter((f) => f.severity === 'note');
  const healthy = problems.length === 0;
  return { target, healthy, verdict: healthy ? `healthy: ${healthySummary}` : problems[0]!.summary, findings: [...problems, ...notes] };
}

/** 260 s → "4 min 20 s", 40 → "40 s", 7300 → "2 h 1 min". */
export function humanSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  return m % 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${Math.floor(m / 60)} h`;
}

/** The dead-letter finding every controller's target shares. */
export function deadLetterFinding(prefix: string, letter: DeadLetter, now: number): Finding {
  const ago = humanSeconds((now - letter.lastFailureAt) / 1000);
  return problem(
    'dead-lettered',
    `${prefix}the key ${letter.controller} ${letter.key} is dead-lettered (${letter.reason}, ${letter.attempts} attempt${letter.attempts === 1 ? '' : 's'}, ${ago} ago)`,
    [`reason: ${letter.reason}: ${letter.message}`, `first failure ${new Date(letter.firstFailureAt).toISOString()}, last ${new Date(letter.lastFailureAt).toISOString()}`],
    `fix the cause, then: virt-reconciler replay --controller ${letter.controller} --key ${letter.key}`,
  );
}
