/**
 * "A drain that does not progress" (issue 18) and a node whose virt-handler is gone, as pure
 * verdicts over gathered evidence (node-evidence.ts). A node is being drained when it is cordoned
 * (`spec.unschedulable`, what `kubectl drain` does first), carries the drain taint, or has VMIs
 * that virt-api marked for evacuation. What keeps a drain from finishing, first problem first:
 * - the node or evacuation key dead-lettered;
 * - virt-handler's heartbeat older than the node controller's timeout (its VMIs are failed, not
 *   migrated);
 * - a VMI whose eviction strategy migrates but that cannot live-migrate: virt-api refuses its
 *   launcher pod's eviction for ever, so `kubectl drain` retries for ever;
 * - a VMI marked for evacuation that has no migration and none coming (the evacuation
 *   controller's last reconcile, or none);
 * - an evacuation migration that is stuck (its own diagnosis: target pod unschedulable, …);
 * and as notes: migrations waiting on the parallel-migration limits (throttled, not stuck), VMIs
 * whose strategy is None (the drain stops them). Pure.
 */
import type { DeadLetter } from '../../shared/queue/port.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import { deadLetterFinding, diagnosis, humanSeconds, note, problem, type Diagnosis, type Finding } from './finding.ts';
import { traceLine } from './trace-checks.ts';
import type { LimitView } from './migration-verdicts.ts';

export interface NodeView {
  readonly name: string;
  /** `spec.unschedulable`: cordoned. */
  readonly cordoned: boolean;
  /** The drain taint (`migrations.nodeDrainTaintKey`, NoSchedule) is on the node. */
  readonly drainTaint: boolean;
  /** The Node's Ready condition status (`True`, `False`, `Unknown`, or '' when absent). */
  readonly ready: string;
  /** `kubevirt.io/schedulable`, as virt-handler and the node controller set it. */
  readonly schedulableLabel?: string;
  /** Epoch ms of virt-handler's `kubevirt.io/heartbeat`, when present and readable. */
  readonly heartbeatAt?: number;
  /** The node controller's verdict on virt-handler (functions/node/liveness.ts). */
  readonly liveness: 'responsive' | 'unresponsive' | 'unknown';
}

/** A VMI whose `status.nodeName` is the node. */
export interface NodeVmiView {
  /** `namespace/name`. */
  readonly key: string;
  readonly phase: string;
  /** The resolved eviction strategy (the VMI's, else the cluster's). */
  readonly evictionStrategy: string;
  readonly migratesOnEviction: boolean;
  /** The LiveMigratable condition, when it is not True. */
  readonly notMigratable?: { readonly reason?: string; readonly message?: string };
  /** `status.evacuationNodeName` names this node. */
  readonly marked: boolean;
  /** Its unfinished migration, if any: name, phase, and whether the evacuation controller made it. */
  readonly migration?: { readonly name: string; readonly phase: string; readonly evacuation: boolean; readonly diagnosis?: Diagnosis };
}

export interface NodeEvidence {
  readonly now: number;
  readonly name: string;
  readonly node?: NodeView;
  /** Non-final VMIs on the node, in key order. */
  readonly vmis: readonly NodeVmiView[];
  /** Dead letters of the node and evacuation controllers for this node's key. */
  readonly deadLetters: readonly DeadLetter[];
  /** The evacuation controller's recent reconciles of this node, oldest first. */
  readonly evacuationTraces: readonly TraceEntry[];
  readonly cluster: LimitView;
  readonly outbound: LimitView;
}

/** The node controller's `heartBeatTimeout`. */
const HEARTBEAT_TIMEOUT_S = 300;

export function diagnoseNode(e: NodeEvidence): Diagnosis {
  const target = `node/${e.name}`;
  const n = e.node;
  const draining = n !== undefined && (n.cordoned || n.drainTaint || e.vmis.some((v) => v.marked));
  const prefix = draining ? `drain of ${e.name} is not progressing: ` : '';
  const findings: Finding[] = e.deadLetters.map((d) => deadLetterFinding(prefix, d, e.now));
  if (!n) {
    const left = e.vmis.length;
    const f = left > 0 ? [problem('node-gone', `node ${e.name} does not exist but ${left} VMI${left === 1 ? '' : 's'} still name it: the node controller fails them (NodeUnresponsive)`, e.vmis.map((v) => `VMI ${v.key} ${v.phase}`))] : [problem('not-found', `not found: Node ${e.name} does not exist`)];
    return diagnosis(target, [...f, ...findings], '');
  }
  if (n.liveness === 'unresponsive') {
    const age = n.heartbeatAt !== undefined ? `is ${humanSeconds((e.now - n.heartbeatAt) / 1000)} old` : 'is missing';
    findings.push(problem('virt-handler-down', `${prefix}virt-handler on ${e.name} is not responding: its heartbeat ${age} (timeout ${humanSeconds(HEARTBEAT_TIMEOUT_S)})`, [`kubevirt.io/schedulable=${n.schedulableLabel ?? '(unset)'}`, 'its VMIs without a live launcher pod are failed (NodeUnresponsive), not migrated'], `check the virt-handler pod on ${e.name} (kubectl -n kubevirt get pods -o wide)`));
  }
  if (draining) findings.push(...drainFindings(e, prefix));
  const healthy = draining ? drainProgress(e) : `node ${e.name} is ${n.ready === 'True' ? 'Ready' : `Ready=${n.ready || 'unknown'}`}${n.cordoned ? ', cordoned' : ''}, ${e.vmis.length} VMI${e.vmis.length === 1 ? '' : 's'}${n.heartbeatAt !== undefined ? `, virt-handler heartbeat ${humanSeconds((e.now - n.heartbeatAt) / 1000)} ago` : ''}`;
  return diagnosis(target, findings, healthy);
}

function drainProgress(e: NodeEvidence): string {
  const migrating = e.vmis.filter((v) => v.migration).length;
  if (e.vmis.length === 0) return `node ${e.name} is drained: no VMIs left on it`;
  return `drain of ${e.name} in progress: ${e.vmis.length} VMI${e.vmis.length === 1 ? '' : 's'} left, ${migrating} migrating`;
}

function drainFindings(e: NodeEvidence, prefix: string): Finding[] {
  const out: Finding[] = [];
  const last = e.evacuationTraces.at(-1);
  for (const v of e.vmis) {
    if (v.migratesOnEviction && v.notMigratable && !v.migration) {
      const why = [v.notMigratable.reason, v.notMigratable.message].filter(Boolean).join(': ') || 'no LiveMigratable=True condition';
      out.push(problem('not-migratable', `${prefix}VMI ${v.key} cannot live-migrate (${why}) but its eviction strategy is ${v.evictionStrategy}: its launcher pod's eviction is refused`, ['virt-api answers the eviction of its launcher pod with 429 until it can migrate; kubectl drain retries for ever'], `stop the VMI, or change its evictionStrategy (None lets the drain stop it)`));
    }
  }
  for (const v of e.vmis) {
    if (!v.migration || !v.migration.diagnosis || v.migration.diagnosis.healthy) continue;
    const d = v.migration.diagnosis;
    const first = d.findings[0]!;
    // Waiting on the limits is the drain being throttled, not stuck.
    if (first.check === 'cluster-limit' || first.check === 'node-limit') continue;
    out.push({ ...first, summary: `${prefix}migration ${v.migration.name} of VMI ${v.key}: ${d.verdict}` });
  }
  const unmigrated = e.vmis.filter((v) => v.marked && v.migratesOnEviction && !v.notMigratable && !v.migration);
  if (unmigrated.length > 0) {
    const detail = !last ? 'no evacuation reconcile of this node is recorded (is the relay running?)' : `the evacuation controller's last reconcile ended ${outcomeText(last.outcome)}`;
    out.push(problem('no-migration', `${prefix}${unmigrated.length} VMI${unmigrated.length === 1 ? ' is' : 's are'} marked for evacuation with no migration (${unmigrated.map((v) => v.key).join(', ')}); ${detail}`, last ? [traceLine(last, e.now)] : []));
  }
  const waiting = e.vmis.filter((v) => v.migration && (v.migration.phase === '' || v.migration.phase === 'Pending'));
  if (waiting.length > 0 && (e.cluster.holders.length >= e.cluster.limit || e.outbound.holders.length >= e.outbound.limit)) {
    out.push(note('limits', `${waiting.length} migration${waiting.length === 1 ? '' : 's'} wait for the limits: cluster ${e.cluster.holders.length} of ${e.cluster.limit}, ${e.name} outbound ${e.outbound.holders.length} of ${e.outbound.limit}`, [`held by ${[...new Set([...e.cluster.holders, ...e.outbound.holders])].join(', ')}`]));
  }
  const stopping = e.vmis.filter((v) => !v.migratesOnEviction);
  if (stopping.length > 0) out.push(note('evicted-not-migrated', `${stopping.length} VMI${stopping.length === 1 ? '' : 's'} will be stopped by the drain, not migrated (eviction strategy ${[...new Set(stopping.map((v) => v.evictionStrategy))].join(', ')}): ${stopping.map((v) => v.key).join(', ')}`));
  return out;
}
