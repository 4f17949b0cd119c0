/**
 * Gathers what the migration verdicts need (migration-verdicts.ts): the migration, its VMI's
 * node, its target pods and their timeouts (the controller's own rule, functions/migration/
 * timeouts.ts), the parallel-migration limits (the KubeVirt CR) and who holds them (the table's
 * leases), its pod expectation, its dead letters and its traces. Reads only.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATIONS, PODS, VMIS } from '../../shared/api/resources.ts';
import { MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { EXPECTATIONS_TIMEOUT_MS, isExpectationSatisfied } from '../../shared/state/port.ts';
import { POD_EXPECTATIONS } from '../../functions/migration/deps.ts';
import { CLUSTER_COUNTER, nodeCounter } from '../../functions/migration/limits.ts';
import { pendingPodTimeout } from '../../functions/migration/timeouts.ts';
import type { EvidenceSources } from './vmi-evidence.ts';
import type { MigrationEvidence, TargetPodView } from './migration-verdicts.ts';
import { epoch, podView } from './views.ts';

export async function gatherMigrationEvidence(src: EvidenceSources, namespace: string, name: string): Promise<MigrationEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, deadLetters, traces, record, config] = await Promise.all([
    src.cluster.get(MIGRATIONS, namespace, name),
    src.queue.listDeadLetters({ key }),
    src.state.traces.recent('migration', key, src.now),
    src.state.expectations.get(POD_EXPECTATIONS, key),
    cachedClusterConfig(src.cluster)(),
  ]);
  const clusterHolders = await src.state.leases.holders(CLUSTER_COUNTER, src.now);
  const base = {
    now: src.now,
    key,
    deadLetters: deadLetters.filter((d) => d.controller === 'migration'),
    traces,
    cluster: { limit: config.migrations.parallelMigrationsPerCluster, holders: clusterHolders },
    ...(record && !isExpectationSatisfied(record, src.now) ? { expectation: { add: record.add, setAt: record.setAt, expiresInSeconds: (record.setAt + EXPECTATIONS_TIMEOUT_MS - src.now) / 1000 } } : {}),
  };
  if (!raw) return { ...base, targetPods: [] };
  const vmiName = raw.spec?.vmiName ?? '';
  const uid = raw.metadata?.uid ?? '';
  const [vmi, pods] = await Promise.all([
    vmiName ? src.cluster.get(VMIS, namespace, vmiName) : Promise.resolve(undefined),
    uid ? src.cluster.list(PODS, namespace, { labelSelector: `${MIGRATION_JOB_UID_LABEL}=${uid}` }).then((l) => l.items) : Promise.resolve([] as V1Pod[]),
  ]);
  const sourceNode = raw.status?.migrationState?.sourceNode ?? vmi?.status?.nodeName;
  const node = sourceNode ? { name: sourceNode, limit: config.migrations.parallelOutboundMigrationsPerNode, holders: await src.state.leases.holders(nodeCounter(sourceNode), src.now) } : undefined;
  const targetPods = pods.map((p): TargetPodView => {
    const t = pendingPodTimeout(p, raw, src.now);
    return { ...podView(p), unschedulable: t.kind !== 'none' && t.unschedulable, ...(t.kind === 'wait' ? { timeoutInSeconds: t.seconds } : t.kind === 'delete' ? { timeoutInSeconds: 0 } : {}) };
  });
  return {
    ...base,
    migration: {
      namespace,
      name,
      uid,
      resourceVersion: raw.metadata?.resourceVersion ?? '',
      vmiName,
      phase: raw.status?.phase ?? '',
      createdAt: epoch(raw.metadata?.creationTimestamp as string | Date | undefined),
      deleting: raw.metadata?.deletionTimestamp !== undefined,
      ...(sourceNode ? { sourceNode } : {}),
      vmiExists: vmi !== undefined,
    },
    targetPods,
    ...(node ? { node } : {}),
  };
}
