/**
 * `virt-reconciler diagnose`: the target's evidence gathered from the cluster, the queue and the
 * table, and its verdict — the first problem found names the cause on the first line. Reads only.
 */
import type { Target } from '../target.ts';

/** The kinds diagnose has verdicts for. */
export const DIAGNOSABLE = ['vmi', 'vm', 'migration', 'replicaset', 'pool', 'node', 'snapshot', 'restore'] as const;
import type { Diagnosis } from './finding.ts';
import { gatherMigrationEvidence } from './migration-evidence.ts';
import { diagnoseMigration } from './migration-verdicts.ts';
import { gatherNodeEvidence } from './node-evidence.ts';
import { diagnoseNode } from './node-verdicts.ts';
import { gatherPoolEvidence, gatherReplicaSetEvidence } from './replicas-evidence.ts';
import { diagnoseReplicas, POOL_KIND, REPLICA_SET_KIND } from './replicas-verdicts.ts';
import { gatherRestoreEvidence } from './restore-evidence.ts';
import { diagnoseRestore } from './restore-verdicts.ts';
import { gatherSnapshotEvidence } from './snapshot-evidence.ts';
import { diagnoseSnapshot } from './snapshot-verdicts.ts';
import { gatherVmEvidence } from './vm-evidence.ts';
import { diagnoseVm } from './vm-verdicts.ts';
import { gatherVmiEvidence, type EvidenceSources } from './vmi-evidence.ts';
import { diagnoseVmi } from './vmi-verdicts.ts';

/** The diagnosis of `target` at `src.now`. */
export async function diagnose(target: Target & { readonly kind: (typeof DIAGNOSABLE)[number] }, src: EvidenceSources): Promise<Diagnosis> {
  switch (target.kind) {
    case 'vmi':
      return diagnoseVmi(await gatherVmiEvidence(src, target.namespace, target.name));
    case 'vm':
      return diagnoseVm(await gatherVmEvidence(src, target.namespace, target.name));
    case 'migration':
      return diagnoseMigration(await gatherMigrationEvidence(src, target.namespace, target.name));
    case 'replicaset':
      return diagnoseReplicas(REPLICA_SET_KIND, await gatherReplicaSetEvidence(src, target.namespace, target.name));
    case 'pool':
      return diagnoseReplicas(POOL_KIND, await gatherPoolEvidence(src, target.namespace, target.name));
    case 'node':
      return diagnoseNode(await gatherNodeEvidence(src, target.name));
    case 'snapshot':
      return diagnoseSnapshot(await gatherSnapshotEvidence(src, target.namespace, target.name));
    case 'restore':
      return diagnoseRestore(await gatherRestoreEvidence(src, target.namespace, target.name));
  }
}

/** The text: the verdict, the first problem's evidence and hint, then the other findings. */
export function renderDiagnosis(d: Diagnosis, source: string): string {
  const lines = [d.verdict];
  const [first, ...rest] = d.findings;
  if (first && !d.healthy) {
    for (const e of first.evidence) lines.push(`  ${e}`);
    if (first.hint) lines.push(`  → ${first.hint}`);
  }
  const others = d.healthy ? d.findings : rest;
  if (others.length > 0) {
    lines.push(d.healthy ? 'notes:' : 'also:');
    for (const f of others) {
      lines.push(`  - ${f.summary}`);
      for (const e of f.evidence) lines.push(`      ${e}`);
      if (f.hint) lines.push(`      → ${f.hint}`);
    }
  }
  lines.push(`(${d.target}; read ${source} and the cluster)`);
  return `${lines.join('\n')}\n`;
}
