/**
 * Gathers what the node verdicts need (node-verdicts.ts): the Node (cordon, drain taint, Ready,
 * virt-handler's heartbeat and schedulable label), the VMIs on it with their eviction strategy
 * and migratability, their unfinished migrations (each with its own diagnosis), the
 * parallel-migration limits, the node and evacuation controllers' dead letters, and the
 * evacuation controller's traces. Reads only.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { MIGRATIONS, NODES, VMIS } from '../../shared/api/resources.ts';
import { EVACUATION_MIGRATION_ANNOTATION, evictionStrategyOf, isFinalMigration, isFinalVmi, isMigratable, migratesOnEviction, migrationVmiKey } from '../../shared/api/vmi-eviction.ts';
import { SCHEDULABLE_NODE_LABEL } from '../../shared/api/well-known.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { HEARTBEAT_ANNOTATION, nodeLiveness } from '../../functions/node/liveness.ts';
import { CLUSTER_COUNTER, nodeCounter } from '../../functions/migration/limits.ts';
import { gatherMigrationEvidence } from './migration-evidence.ts';
import { diagnoseMigration } from './migration-verdicts.ts';
import type { NodeEvidence, NodeView, NodeVmiView } from './node-verdicts.ts';
import { epoch } from './views.ts';
import type { EvidenceSources } from './vmi-evidence.ts';

export async function gatherNodeEvidence(src: EvidenceSources, name: string): Promise<NodeEvidence> {
  const [raw, config, vmis, migrations, deadLetters, evacuationTraces, clusterHolders, outboundHolders] = await Promise.all([
    src.cluster.get(NODES, undefined, name),
    cachedClusterConfig(src.cluster)(),
    src.cluster.list(VMIS, undefined),
    src.cluster.list(MIGRATIONS, undefined),
    src.queue.listDeadLetters({ key: name }),
    src.state.traces.recent('evacuation', name, src.now),
    src.state.leases.holders(CLUSTER_COUNTER, src.now),
    src.state.leases.holders(nodeCounter(name), src.now),
  ]);
  const unfinished = new Map(migrations.items.filter((m) => !isFinalMigration(m)).map((m) => [migrationVmiKey(m), m]));
  const onNode = vmis.items.filter((v) => v.status?.nodeName === name && !isFinalVmi(v));
  const views = await Promise.all(onNode.map((v) => vmiOnNode(src, v, name, config.evictionStrategy, unfinished)));
  return {
    now: src.now,
    name,
    ...(raw ? { node: nodeView(raw, config.migrations.nodeDrainTaintKey, src.now) } : {}),
    vmis: views.sort((a, b) => a.key.localeCompare(b.key)),
    deadLetters: deadLetters.filter((d) => d.controller === 'node' || d.controller === 'evacuation'),
    evacuationTraces,
    cluster: { limit: config.migrations.parallelMigrationsPerCluster, holders: clusterHolders },
    outbound: { limit: config.migrations.parallelOutboundMigrationsPerNode, holders: outboundHolders },
  };
}

function nodeView(raw: V1Node, drainTaintKey: string, now: number): NodeView {
  const heartbeat = raw.metadata?.annotations?.[HEARTBEAT_ANNOTATION];
  const heartbeatAt = heartbeat ? epoch(heartbeat) : 0;
  const schedulable = raw.metadata?.labels?.[SCHEDULABLE_NODE_LABEL];
  return {
    name: raw.metadata?.name ?? '',
    cordoned: raw.spec?.unschedulable === true,
    drainTaint: (raw.spec?.taints ?? []).some((t) => t.key === drainTaintKey && t.effect === 'NoSchedule'),
    ready: raw.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '',
    ...(schedulable !== undefined ? { schedulableLabel: schedulable } : {}),
    ...(heartbeatAt > 0 ? { heartbeatAt } : {}),
    liveness: nodeLiveness(raw, now).state,
  };
}

async function vmiOnNode(src: EvidenceSources, v: VirtualMachineInstance, node: string, clusterStrategy: string | undefined, unfinished: ReadonlyMap<string, { metadata?: { name?: string; annotations?: Record<string, string> }; status?: { phase?: string } }>): Promise<NodeVmiView> {
  const namespace = v.metadata?.namespace ?? '';
  const key = `${namespace}/${v.metadata?.name ?? ''}`;
  const lm = (v.status?.conditions ?? []).find((c) => c.type === 'LiveMigratable');
  const m = unfinished.get(key);
  const migrationName = m?.metadata?.name ?? '';
  const migration = m
    ? {
        name: migrationName,
        phase: m.status?.phase ?? '',
        evacuation: m.metadata?.annotations?.[EVACUATION_MIGRATION_ANNOTATION] !== undefined,
        diagnosis: diagnoseMigration(await gatherMigrationEvidence(src, namespace, migrationName)),
      }
    : undefined;
  return {
    key,
    phase: v.status?.phase ?? '',
    evictionStrategy: evictionStrategyOf(v, clusterStrategy) ?? 'None',
    migratesOnEviction: migratesOnEviction(v, clusterStrategy),
    ...(isMigratable(v) ? {} : { notMigratable: { ...(lm?.reason ? { reason: lm.reason } : {}), ...(lm?.message ? { message: lm.message } : {}) } }),
    marked: v.status?.evacuationNodeName === node,
    ...(migration ? { migration } : {}),
  };
}
