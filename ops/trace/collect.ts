/**
 * Which keys a trace follows and what they recorded: the object's own controller key, then its
 * children — a pool's VMs, a replica set's VMIs, a node's evacuation migrations, a VM's VMI (same key in the VMI controller), a VMI's migrations (from
 * the cluster when it can be read), and whatever the traced reconciles created — and the launcher
 * and target pods the reconciles wrote (pods have no controller of their own: their story is the
 * writes of the VMI and migration controllers). Reads only.
 */
import { MIGRATIONS as MIGRATION_RESOURCE } from '../../shared/api/resources.ts';
import type { TraceEntry, Traces } from '../../shared/state/traces.ts';
import type { ClusterReader } from '../cluster-reader.ts';
import { showTarget, type Target } from '../target.ts';
import { byTime, timeline, type TimelineStep } from './timeline.ts';

const VMIS = 'virtualmachineinstances';

/** The controller whose key an object created by a traced write is (same namespace/name). */
const CREATED: Readonly<Record<string, string>> = {
  virtualmachines: 'vm',
  virtualmachineinstances: 'vmi',
  virtualmachineinstancemigrations: 'migration',
};

export interface TraceSources {
  readonly traces: Pick<Traces, 'recent'>;
  /** The names of a VMI's migrations in the cluster; without it, only those the traces created. */
  readonly migrationsOf?: (namespace: string, vmiName: string) => Promise<string[]>;
  readonly now: number;
}

/** One key the trace followed, and why. */
export interface TraceLink {
  readonly controller: string;
  readonly key: string;
  /** "the object", "the VM's VMI", "a migration of VMI default/x", … */
  readonly why: string;
  /** Entries it contributed. */
  readonly reconciles: number;
}

/** The answer of `virt-reconciler trace`. */
export interface ObjectTrace {
  /** `vm/default/testvm`. */
  readonly target: string;
  readonly links: readonly TraceLink[];
  /** Pods the traced reconciles wrote (`namespace/name`), in order of first write. */
  readonly pods: readonly string[];
  /** Every entry, oldest reconcile first. */
  readonly entries: readonly TraceEntry[];
  readonly timeline: readonly TimelineStep[];
}

/** {@link TraceSources.migrationsOf} over the cluster: the migrations whose `spec.vmiName` is the VMI. */
export function clusterMigrations(cluster: Pick<ClusterReader, 'list'>): (namespace: string, vmiName: string) => Promise<string[]> {
  return async (namespace, vmiName) => {
    const list = await cluster.list(MIGRATION_RESOURCE, namespace);
    return list.items.filter((m) => m.spec?.vmiName === vmiName).map((m) => m.metadata?.name ?? '').filter(Boolean);
  };
}

/** Reads the chain of `target` (see the module comment). */
export async function collectTrace(target: Target, src: TraceSources): Promise<ObjectTrace> {
  const links: { controller: string; key: string; why: string; entries: TraceEntry[] }[] = [];
  const seen = new Set<string>();
  const follow = async (controller: string, key: string, why: string, keep: (e: TraceEntry) => boolean = () => true) => {
    if (seen.has(`${controller} ${key}`)) return;
    seen.add(`${controller} ${key}`);
    const entries = (await src.traces.recent(controller, key, src.now)).filter(keep);
    links.push({ controller, key, why, entries });
  };
  const { namespace, name, key } = target;
  if (target.kind === 'migration' || target.kind === 'pool' || target.kind === 'replicaset' || target.kind === 'snapshot' || target.kind === 'restore') {
    await follow(target.kind, key, 'the object');
  } else if (target.kind === 'node') {
    // A node's story: the node controller's checks, and the evacuation controller's migrations.
    await follow('node', key, 'the object');
    await follow('evacuation', key, "the node's evacuation");
  } else {
    if (target.kind === 'vm') {
      await follow('vm', key, 'the object');
      await follow('vmi', key, "the VM's VMI");
    } else {
      await follow('vmi', key, 'the object');
      // The VM controller of the same key touched the VMI only if it wrote it (created, deleted it).
      await follow('vm', key, 'the owning VM, where it wrote the VMI', (e) => e.writes.some((w) => w.resource.startsWith(VMIS) && w.name === name));
    }
    const fromCluster = src.migrationsOf ? await src.migrationsOf(namespace, name) : [];
    for (const m of fromCluster) await follow('migration', `${namespace}/${m}`, `a migration of VMI ${key}`);
  }
  // Children the followed reconciles created, even if gone since: a pool's VMs, a VM's VMI, a
  // migration of an evacuation or a workload update. Each is followed in turn (its own children too).
  for (let i = 0; i < links.length; i++) {
    for (const w of links[i]!.entries.flatMap((e) => e.writes)) {
      const controller = w.verb === 'create' && w.code < 300 ? CREATED[w.resource] : undefined;
      if (controller) await follow(controller, `${w.namespace ?? namespace}/${w.name}`, `created by ${links[i]!.controller} ${links[i]!.key}`);
    }
  }
  const entries = byTime(links.flatMap((l) => l.entries));
  const pods: string[] = [];
  for (const w of entries.flatMap((e) => e.writes)) {
    const pod = `${w.namespace ?? namespace}/${w.name}`;
    if (w.resource.split('/')[0] === 'pods' && !pods.includes(pod)) pods.push(pod);
  }
  return {
    target: showTarget(target),
    links: links.map((l) => ({ controller: l.controller, key: l.key, why: l.why, reconciles: l.entries.length })),
    pods,
    entries,
    timeline: timeline(entries),
  };
}
