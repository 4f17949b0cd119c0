/**
 * `virt-reconciler diagnose <vmi|vm|migration|replicaset|pool>/<ns>/<name>` or `node/<name>`: why an object is stuck, in one
 * line, then the evidence (ops/diagnose/). Reads the cluster, the queue, the DLQ and the
 * table's expectations, leases and traces; never writes. Exit 0 healthy, 1 a problem found (or a
 * source that cannot be read), 2 bad input.
 */
import { clusterReader } from '../../ops/cluster-reader.ts';
import { diagnose, DIAGNOSABLE, renderDiagnosis } from '../../ops/diagnose/diagnose.ts';
import { OPS_HELP, targetCommand } from '../ops-backend.ts';

const HELP = `usage: virt-reconciler diagnose <vmi|vm|migration|replicaset|pool|snapshot|restore>/<namespace>/<name> [--json] [--db FILE | --aws …]
       virt-reconciler diagnose node/<name> [--json] [--db FILE | --aws …]

Answers "why is it stuck?" with a verdict on the first line and the evidence under it:
a missing or Pending PVC/DataVolume, an invalid spec (network…), a dead-lettered key (and the
replay command), a pod expectation being waited on, a full parallel-migration limit (and who
holds it), an unschedulable target pod (and when its timeout fires), write conflicts, a relay
that has not delivered the object's latest change; a replica set or pool short of replicas
(paused, failing creates, waiting on expectations, or its first unready replica's own cause); a
node drain that does not progress (a VMI that cannot live-migrate, a stuck evacuation
migration, no migration at all) or a node whose virt-handler stopped; a snapshot that does not
become ready (its source missing, an error, the lock, VolumeSnapshots not ready); a restore that
does not complete (its target VM still running, its snapshot not ready, another restore holding
the VM, restored claims not bound). Reads only.

Exit code: 0 healthy, 1 a problem was found (or a source could not be read), 2 bad input.

  --json                {target, healthy, verdict, findings: [{severity, check, summary, evidence, hint?}]}
${OPS_HELP}`;

export const command = targetCommand(HELP, DIAGNOSABLE, async (target, { json }, b) => {
  const cluster = clusterReader(b.kubeConfig());
  const d = await diagnose(target, { cluster, queue: b.queue.queue, state: b.state, now: Date.now() });
  process.stdout.write(json ? JSON.stringify(d, null, 2) + '\n' : renderDiagnosis(d, b.description));
  return d.healthy ? 0 : 1;
});
