/**
 * The seed's symptom 2 — "a migration stays Pending for a long time" — as pure verdicts over
 * gathered evidence (migration-evidence.ts): the cluster-wide or per-node parallel-migration
 * limit full (and which migrations hold it), a target pod the scheduler cannot place (its message
 * and when the unschedulable timeout deletes it), a dead-lettered key, a pod expectation the
 * controller waits on; plus the trace checks every object gets (trace-checks.ts).
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import { deadLetterFinding, diagnosis, humanSeconds, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceFindings, traceLine } from './trace-checks.ts';
import type { PodView } from './views.ts';

/** A target pod and, while it is Pending, when the controller's timeout deletes it. */
export interface TargetPodView extends PodView {
  /** Seconds until the pending (or unschedulable) timeout fires; undefined when not Pending. */
  readonly timeoutInSeconds?: number;
  readonly unschedulable: boolean;
}

export interface MigrationView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly vmiName: string;
  /** '' until the controller sets one. */
  readonly phase: string;
  readonly createdAt: number;
  readonly deleting: boolean;
  /** The VMI's node (the migration's source), if the VMI exists. */
  readonly sourceNode?: string;
  readonly vmiExists: boolean;
}

/** A parallel-migration limit and who holds it now. */
export interface LimitView {
  readonly limit: number;
  /** Migration keys holding a lease, sorted. */
  readonly holders: readonly string[];
}

export interface MigrationEvidence {
  readonly now: number;
  /** `namespace/name`. */
  readonly key: string;
  readonly migration?: MigrationView;
  readonly targetPods: readonly TargetPodView[];
  readonly deadLetters: readonly DeadLetter[];
  /** The migration controller's recent reconciles of this key, oldest first. */
  readonly traces: readonly TraceEntry[];
  readonly cluster: LimitView;
  /** The source node's outbound limit, when the source node is known. */
  readonly node?: LimitView & { readonly name: string };
  /** The migration controller's pod expectation (`migration-pods`), if unsatisfied. */
  readonly expectation?: { readonly add: number; readonly setAt: number; readonly expiresInSeconds: number };
}

const FINAL = new Set(['Succeeded', 'Failed']);
/** Phases before a target pod runs: what "stays Pending" covers. */
const WAITING = new Set(['', 'Pending', 'Scheduling']);

export function diagnoseMigration(e: MigrationEvidence): Diagnosis {
  const target = `migration/${e.key}`;
  const letters = e.deadLetters.map((d) => deadLetterFinding(e.migration && WAITING.has(e.migration.phase) ? 'migration Pending: ' : '', d, e.now));
  const m = e.migration;
  if (!m) return diagnosis(target, [problem('not-found', `not found: VirtualMachineInstanceMigration ${e.key} does not exist`), ...letters], '');
  const findings: Finding[] = [...letters];
  if (!m.vmiExists && !FINAL.has(m.phase)) findings.push(problem('no-vmi', `migration ${m.phase || 'Pending'}: its VMI ${m.namespace}/${m.vmiName} does not exist`));
  const live = e.targetPods.filter((p) => !p.deleting);
  for (const pod of live) {
    if (pod.phase !== 'Pending') continue;
    if (pod.unschedulable) {
      const fires = pod.timeoutInSeconds === undefined ? '' : `; the unschedulable timeout fires in ${humanSeconds(pod.timeoutInSeconds)}`;
      findings.push(problem('target-unschedulable', `target pod unschedulable: ${pod.scheduled?.message ?? 'no message from the scheduler'}${fires}`, [`target pod ${m.namespace}/${pod.name}, created ${humanSeconds((e.now - pod.createdAt) / 1000)} ago`, 'when the timeout fires the controller deletes the pod and the migration fails'], 'free capacity, relax the VMI\'s node selector or affinity, or cancel the migration'));
    } else if (pod.timeoutInSeconds !== undefined) {
      findings.push(problem('target-pending', `target pod ${m.namespace}/${pod.name} is Pending (${pod.nodeName ? `on ${pod.nodeName}` : 'not scheduled yet'}); the pending timeout fires in ${humanSeconds(pod.timeoutInSeconds)}`));
    }
  }
  if (WAITING.has(m.phase) && live.length === 0 && !m.deleting) findings.push(...waitingFindings(e, m));
  if (m.phase === 'Failed') findings.push(problem('failed', `migration Failed${lastOutcome(e)}`));
  const traced = { kind: 'VirtualMachineInstanceMigration', label: 'migration', resource: 'virtualmachineinstancemigrations', name: m.name, resourceVersion: m.resourceVersion };
  findings.push(...traceFindings(e.traces, traced, e.now));
  const pod = live[0];
  return diagnosis(target, findings, `migration ${e.key} is ${m.phase || 'Pending'}${pod ? ` (target pod ${pod.name} ${pod.phase}${pod.nodeName ? ` on ${pod.nodeName}` : ''})` : ''}`);
}

function lastOutcome(e: MigrationEvidence): string {
  const last = e.traces.at(-1);
  return last ? ` (last reconcile: ${outcomeText(last.outcome)})` : '';
}

/** No target pod yet: a limit, an expectation, or what the last reconcile said. */
function waitingFindings(e: MigrationEvidence, m: MigrationView): Finding[] {
  const last = e.traces.at(-1);
  const why = last?.outcome.kind === 'requeue' ? last.outcome.why : '';
  const holdsCluster = e.cluster.holders.includes(e.key);
  const out: Finding[] = [];
  if (/parallelMigrationsPerCluster/.test(why) || (!holdsCluster && e.cluster.holders.length >= e.cluster.limit)) {
    const n = e.cluster.holders.length;
    out.push(problem('cluster-limit', `migration Pending: the cluster limit is full (${n} of ${e.cluster.limit}) — ${n === 1 ? 'this migration holds' : `these ${n} migrations hold`} it: ${e.cluster.holders.join(', ')}`, [`parallelMigrationsPerCluster = ${e.cluster.limit} (KubeVirt CR spec.configuration.migrations)`, ...(last ? [traceLine(last, e.now)] : [])], 'wait for those to finish, or raise parallelMigrationsPerCluster'));
  } else if (e.node && (/parallelOutboundMigrationsPerNode/.test(why) || (!e.node.holders.includes(e.key) && e.node.holders.length >= e.node.limit))) {
    const n = e.node.holders.length;
    out.push(problem('node-limit', `migration Pending: node ${e.node.name}'s outbound limit is full (${n} of ${e.node.limit}) — held by ${e.node.holders.join(', ')}`, [`parallelOutboundMigrationsPerNode = ${e.node.limit}`, ...(last ? [traceLine(last, e.now)] : [])]));
  }
  if (e.expectation) {
    out.push(problem('expectation', `migration Pending: waiting on a target pod expectation set ${humanSeconds((e.now - e.expectation.setAt) / 1000)} ago; it expires in ${humanSeconds(e.expectation.expiresInSeconds)}`));
  }
  if (out.length === 0 && !last) out.push(problem('no-reconcile', `migration Pending: no reconcile of migration ${e.key} is recorded: is the relay running, and the migration controller's queue moving? (virt-reconciler queues)`));
  else if (out.length === 0 && last && last.outcome.kind === 'retry') out.push(problem('failing', `migration Pending: reconciles keep failing: ${last.outcome.reason}: ${last.outcome.message}`, [traceLine(last, e.now)]));
  else if (out.length === 0 && last && e.now - m.createdAt > 60_000) out.push(problem('pending', `migration Pending for ${humanSeconds((e.now - m.createdAt) / 1000)} with no target pod: ${outcomeText(last.outcome)}`, [traceLine(last, e.now)]));
  return out;
}
