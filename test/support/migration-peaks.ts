/**
 * The migration limits as the API server saw them: replays the audit log and, at every audited
 * write, counts the migrations that have a target pod and are not yet final ("running", as
 * KubeVirt counts them), cluster-wide and per source node.
 */
import type { AuditEntry } from '../../sandbox/apiserver/audit.ts';
import { MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';

export interface Peaks {
  cluster: number;
  perNode: number;
  perNodeAt: string;
  started: number;
  /** The migrations (names) running at the cluster peak, and the write that reached it. */
  runningAtPeak: string[];
  peakAt: string;
}

/**
 * The writes in commit order: by resourceVersion (one global counter on both control planes).
 * The order of the real API server's audit lines is not it: a request's line is written after
 * its response may already have reached the client, so a write caused by another can be logged first.
 */
export function inCommitOrder(entries: readonly AuditEntry[]): AuditEntry[] {
  // A write answered without an object (a delete's Status) keeps the place of the write before it.
  let last = 0n;
  const keyed = entries.map((e, i) => ({ e, i, rv: (last = /^\d+$/.test(e.resourceVersion) ? BigInt(e.resourceVersion) : last) }));
  return keyed.sort((a, b) => (a.rv === b.rv ? a.i - b.i : a.rv < b.rv ? -1 : 1)).map((x) => x.e);
}

/**
 * Replays the audit log (pass it in commit order); returns the highest counts seen at any instant.
 * A target pod's source node is its VMI's node as last written; `knownVmiNodes` gives the VMIs'
 * nodes from before the log starts (a log cleared after the VMIs were placed). A source still
 * unknown counts alone (`?<migration uid>`), never pooled with other unknowns into one node.
 */
export function peaksFromAudit(entries: readonly AuditEntry[], knownVmiNodes: ReadonlyMap<string, string> = new Map()): Peaks {
  const vmiNode = new Map<string, string>(knownVmiNodes);
  const running = new Map<string, string>(); // migration uid → source node
  const finished = new Set<string>();
  const peaks: Peaks = { cluster: 0, perNode: 0, perNodeAt: '', started: 0, runningAtPeak: [], peakAt: '' };
  const nameOf = new Map<string, string>(); // migration uid → name
  for (const e of entries) {
    const obj = e.object as { metadata: { uid?: string; labels?: Record<string, string>; ownerReferences?: { name: string }[] }; status?: { nodeName?: string; phase?: string } };
    if (e.resource === 'virtualmachineinstances' && obj.status?.nodeName) vmiNode.set(e.name, obj.status.nodeName);
    if (e.resource === 'pods' && e.type === 'ADDED') {
      const uid = obj.metadata.labels?.[MIGRATION_JOB_UID_LABEL];
      if (uid && !finished.has(uid)) {
        running.set(uid, vmiNode.get(obj.metadata.ownerReferences?.[0]?.name ?? '') ?? `?${uid}`);
        peaks.started++;
      }
    }
    if (e.resource === 'virtualmachineinstancemigrations' && obj.metadata?.uid) nameOf.set(obj.metadata.uid, e.name);
    if (e.resource === 'virtualmachineinstancemigrations' && (obj.status?.phase === 'Succeeded' || obj.status?.phase === 'Failed' || e.type === 'DELETED')) {
      const uid = obj.metadata.uid ?? '';
      finished.add(uid);
      running.delete(uid);
    }
    if (running.size > peaks.cluster) {
      peaks.cluster = running.size;
      peaks.runningAtPeak = [...running.keys()].map((uid) => nameOf.get(uid) ?? uid);
      peaks.peakAt = `${e.verb} ${e.resource}/${e.name} rv ${e.resourceVersion}`;
    }
    const byNode = new Map<string, number>();
    for (const n of running.values()) byNode.set(n, (byNode.get(n) ?? 0) + 1);
    for (const [n, k] of byNode) {
      if (k > peaks.perNode) {
        peaks.perNode = k;
        peaks.perNodeAt = n;
      }
    }
  }
  return peaks;
}

/**
 * Replays migration writes in commit order: the VMIs that ever had two unfinished migrations at
 * once (a migration is unfinished from its create until it is Succeeded, Failed or deleted).
 */
export function vmisWithTwoUnfinished(entries: readonly AuditEntry[]): string[] {
  const open = new Map<string, Set<string>>();
  const twice = new Set<string>();
  for (const e of inCommitOrder(entries)) {
    if (e.resource !== 'virtualmachineinstancemigrations') continue;
    const m = e.object as { metadata?: { uid?: string; namespace?: string }; spec?: { vmiName?: string }; status?: { phase?: string } };
    if (!m.spec?.vmiName) continue;
    const vmi = `${m.metadata?.namespace ?? e.namespace ?? ''}/${m.spec.vmiName}`;
    const set = open.get(vmi) ?? new Set<string>();
    if (e.type === 'DELETED' || m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed') set.delete(m.metadata?.uid ?? '');
    else set.add(m.metadata?.uid ?? '');
    open.set(vmi, set);
    if (set.size > 1) twice.add(vmi);
  }
  return [...twice];
}
