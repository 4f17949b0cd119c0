/**
 * The evacuation controller's part of the relay (reference node-drain-updates §2.1), keyed by
 * node name: Node events wake the node (an update only when its taints or schedulability
 * changed); a migration's add wakes the node its evacuation annotation names, and its other
 * events — an update only when it made the migration final — wake the node of its VMI (looked up
 * in a small VMI → node index, the relay's stand-in for the VMI informer); VMI events wake the
 * node the VMI runs on — when the reconcile could act on it, and an update only when it changed
 * what the pass reads.
 *
 * Why VMI events are filtered: a node's pass considers all its VMIs only when it has the drain
 * taint (NoSchedule), and otherwise only the VMIs marked for eviction (`status.evacuationNodeName`
 * set) — §2.2 step 4. So a VMI event on a node without a NoSchedule taint, for a VMI that is not
 * (and was not) marked, leaves the pass with nothing to consider. KubeVirt pays an informer read
 * for it; here it is a reconcile, a node read and a list of the node's VMIs — O(VMIs per node)
 * per VMI event, which made a 10,000-VMI burst quadratic. The relay keeps the nodes carrying any
 * NoSchedule taint (a superset of the drain taint, whatever its configured key) from the Node
 * events; a node not seen yet is woken by its own ADDED event, which makes a full pass.
 *
 * Why updates are filtered (a drain): a node's pass reads of a Node its taints, of a VMI the few
 * fields its choice looks at (`vmiFacts`), and of a migration only whether it is final. A drain's
 * VMI changes its migration state and labels a dozen times, and its migration goes through as
 * many phases; each woke the tainted node, and each pass listed the node's VMIs, all migrations
 * and the launcher pods again to decide nothing new. So an update wakes only when what the pass
 * reads changed. The relay hands a mapper the previous object as a metadata stub (no spec or
 * status), so the mapper remembers those facts itself: a short string per node, per VMI on a
 * tainted node or marked for eviction, and a bit per migration — never the objects.
 */
import { EVACUATION_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import { NODE_NAME_LABEL } from '../../shared/api/well-known.ts';
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { NODES, VMIS, MIGRATIONS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

/** What a pass reads of a Node: its taints and schedulability. */
function nodeFacts(node: WatchedObject): string {
  return JSON.stringify([node.spec?.unschedulable === true, node.spec?.taints ?? []]);
}

/**
 * What a pass reads of a VMI (candidates.ts): where it is (field and label), its eviction mark,
 * phase, deletion, eviction strategy, `LiveMigratable`, and its migration state's timestamps.
 */
function vmiFacts(vmi: WatchedObject): string {
  const status = vmi.status ?? {};
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as { type?: unknown; status?: unknown }[];
  const migratable = conditions.find((c) => c.type === 'LiveMigratable')?.status;
  const ms = (status.migrationState ?? {}) as { startTimestamp?: unknown; endTimestamp?: unknown };
  return JSON.stringify([
    vmi.metadata?.uid,
    status.nodeName,
    vmi.metadata?.labels?.[NODE_NAME_LABEL],
    status.evacuationNodeName,
    status.phase,
    vmi.metadata?.deletionTimestamp !== undefined && vmi.metadata?.deletionTimestamp !== null,
    vmi.spec?.evictionStrategy,
    migratable,
    ms.startTimestamp,
    ms.endTimestamp,
  ]);
}

const isMarked = (o: WatchedObject) => typeof o.status?.evacuationNodeName === 'string' && o.status.evacuationNodeName !== '';
const isFinal = (o: WatchedObject) => o.status?.phase === 'Succeeded' || o.status?.phase === 'Failed';

export function evacuationMapper(): EventMapper {
  /** `ns/name` of each VMI seen → its `status.nodeName`. */
  const vmiNodes = new Map<string, string>();
  /** Nodes with a NoSchedule taint (any key). */
  const tainted = new Set<string>();
  /** Node name → its facts as last seen. */
  const nodes = new Map<string, string>();
  /** `ns/name` → facts of each VMI last seen on a tainted node or marked for eviction. */
  const watchedVmis = new Map<string, string>();
  /** `ns/name` of each migration → whether it was final when last seen. */
  const migrationFinal = new Map<string, boolean>();
  const wake = (node: string | undefined): KeyTarget[] => (node ? [{ controller: 'evacuation', key: node }] : []);
  return (kind, type, obj) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    switch (kind) {
      case 'Node': {
        const name = obj.metadata?.name ?? '';
        const taints = (obj.spec?.taints ?? []) as readonly { effect?: string }[];
        if (type !== 'DELETED' && taints.some((t) => t.effect === 'NoSchedule')) tainted.add(name);
        else tainted.delete(name);
        const facts = nodeFacts(obj);
        const before = nodes.get(name);
        if (type === 'DELETED') nodes.delete(name);
        else nodes.set(name, facts);
        // An update that keeps them (a status heartbeat, a label) would list the node's VMIs again for nothing.
        return type === 'MODIFIED' && before === facts ? [] : wake(name);
      }
      case 'VirtualMachineInstance': {
        const node = typeof obj.status?.nodeName === 'string' ? obj.status.nodeName : '';
        if (type === 'DELETED' || !node) vmiNodes.delete(key);
        else vmiNodes.set(key, node);
        const before = watchedVmis.get(key);
        const considered = tainted.has(node) || isMarked(obj);
        const facts = vmiFacts(obj);
        if (considered && type !== 'DELETED') watchedVmis.set(key, facts);
        else watchedVmis.delete(key);
        // Seen before on a tainted node or marked (the mark went away, it left the node): wake once more.
        if (!considered && before === undefined) return [];
        return type === 'MODIFIED' && before === facts ? [] : wake(node);
      }
      case 'VirtualMachineInstanceMigration': {
        const final = isFinal(obj);
        const before = migrationFinal.get(key);
        if (type === 'DELETED') migrationFinal.delete(key);
        else migrationFinal.set(key, final);
        const annotated = obj.metadata?.annotations?.[EVACUATION_MIGRATION_ANNOTATION];
        if (type === 'ADDED' && annotated) return wake(annotated);
        // Its phases in between change nothing a pass reads: only whether the VMI has an unfinished migration.
        if (type === 'MODIFIED' && before === final) return [];
        const vmiName = typeof obj.spec?.vmiName === 'string' ? obj.spec.vmiName : '';
        return wake(vmiNodes.get(`${ns}/${vmiName}`));
      }
      default:
        return [];
    }
  };
}

/** What wakes the evacuation controller's keys. */
export const evacuationWakes = defineWakes({ controller: 'evacuation', watches: [{ res: NODES }, { res: VMIS }, { res: MIGRATIONS }], mapper: evacuationMapper });
