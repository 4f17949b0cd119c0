/**
 * `virt-reconciler trace <kind>/<ns>/<name>`: the timeline event → message → reconcile → writes
 * of every controller that touched the object and its children (ops/trace/). Reads the
 * state table's traces and, for a VMI's migrations, the cluster; never writes.
 */
import { clusterReader } from '../../ops/cluster-reader.ts';
import { TARGET_KINDS } from '../../ops/target.ts';
import { clusterMigrations, collectTrace } from '../../ops/trace/collect.ts';
import { renderTrace } from '../../ops/trace/render.ts';
import { OPS_HELP, targetCommand, type OpsBackend } from '../ops-backend.ts';

const HELP = `usage: virt-reconciler trace <vm|vmi|migration|replicaset|pool>/<namespace>/<name> [--json] [--db FILE | --aws …]
       virt-reconciler trace node/<name> [--json] [--db FILE | --aws …]

Prints, oldest first, every recorded reconcile of the object and of its children (a pool's VMs, a
replica set's VMIs, a node's evacuation migrations, a VM's VMI,
the VMI's migrations, the launcher and target pods those reconciles wrote): the event that caused
it, the message (enqueued, received, attempt, coalesced), the reconcile (duration, reads, outcome)
and each API write with the apiserver's answer. Traces keep the last 50 reconciles per key for 6 h.
Reads only.

  --json                the trace as JSON: target, links, pods, entries, timeline
${OPS_HELP}`;

export const command = targetCommand(HELP, TARGET_KINDS, async (target, { json }, b) => {
  const cluster = migrationsLookup(b);
  const trace = await collectTrace(target, { traces: b.state.traces, now: Date.now(), migrationsOf: cluster.lookup });
  if (json) {
    process.stdout.write(JSON.stringify(trace, null, 2) + '\n');
    return 0;
  }
  process.stdout.write(renderTrace(trace, b.description));
  if (cluster.note) process.stdout.write(`note: ${cluster.note}\n`);
  return 0;
});

/** A VMI's migrations from the cluster, when there is one to read; else why not (the trace still works). */
function migrationsLookup(b: OpsBackend): { lookup: (ns: string, vmi: string) => Promise<string[]>; note?: string } {
  const out: { lookup: (ns: string, vmi: string) => Promise<string[]>; note?: string } = {
    lookup: async (ns, vmi) => {
      try {
        return await clusterMigrations(clusterReader(b.kubeConfig()))(ns, vmi);
      } catch (err) {
        out.note = `migrations not looked up in the cluster (${err instanceof Error ? err.message : String(err)}); only those the traces created are shown`;
        return [];
      }
    },
  };
  return out;
}
