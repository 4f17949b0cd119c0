/**
 * The evacuation controller's part of the relay (reference node-drain-updates §2.1), keyed by
 * node name: Node events wake the node (an update only when its taints or schedulability
 * changed); a migration's add wakes the node its evacuation annotation names, and its other
 * events wake the node of its VMI (looked up in a small VMI →
 * node index, the relay's stand-in for the VMI informer); VMI events wake the node the VMI runs
 * on — when the reconcile could act on it.
 *
 * Why VMI events are filtered: a node's pass considers all its VMIs only when it has the drain
 * taint (NoSchedule), and otherwise only the VMIs marked for eviction (`status.evacuationNodeName`
 * set) — §2.2 step 4. So a VMI event on a node without a NoSchedule taint, for a VMI that is not
 * (and was not) marked, leaves the pass with nothing to consider. KubeVirt pays an informer read
 * for it; here it is a reconcile, a node read and a list of the node's VMIs — O(VMIs per node)
 * per VMI event, which made a 10,000-VMI burst quadratic. The relay keeps the nodes carrying any
 * NoSchedule taint (a superset of the drain taint, whatever its configured key) from the Node
 * events; a node not seen yet is woken by its own ADDED event, which makes a full pass.
 */
import { EVACUATION_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { NODES, VMIS, MIGRATIONS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

/** Whether two versions of a Node carry the same taints and schedulability. */
function sameTaints(a: WatchedObject, b: WatchedObject): boolean {
  return a.spec?.unschedulable === b.spec?.unschedulable && JSON.stringify(a.spec?.taints ?? []) === JSON.stringify(b.spec?.taints ?? []);
}

const isMarked = (o: WatchedObject | undefined) => typeof o?.status?.evacuationNodeName === 'string' && o.status.evacuationNodeName !== '';

export function evacuationMapper(): EventMapper {
  /** `ns/name` of each VMI seen → its `status.nodeName`. */
  const vmiNodes = new Map<string, string>();
  /** Nodes with a NoSchedule taint (any key). */
  const tainted = new Set<string>();
  const wake = (node: string | undefined): KeyTarget[] => (node ? [{ controller: 'evacuation', key: node }] : []);
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    switch (kind) {
      case 'Node': {
        const name = obj.metadata?.name ?? '';
        const taints = (obj.spec?.taints ?? []) as readonly { effect?: string }[];
        if (type !== 'DELETED' && taints.some((t) => t.effect === 'NoSchedule')) tainted.add(name);
        else tainted.delete(name);
        // The pass reads of its node only whether it is there and its taints: an update that keeps
        // them (a status heartbeat, a label) would list the node's VMIs again for nothing.
        if (type === 'MODIFIED' && old && sameTaints(old, obj)) return [];
        return wake(name);
      }
      case 'VirtualMachineInstance': {
        const key = `${ns}/${obj.metadata?.name ?? ''}`;
        const node = typeof obj.status?.nodeName === 'string' ? obj.status.nodeName : '';
        if (type === 'DELETED' || !node) vmiNodes.delete(key);
        else vmiNodes.set(key, node);
        return tainted.has(node) || isMarked(obj) || isMarked(old) ? wake(node) : [];
      }
      case 'VirtualMachineInstanceMigration': {
        const annotated = obj.metadata?.annotations?.[EVACUATION_MIGRATION_ANNOTATION];
        if (type === 'ADDED' && annotated) return wake(annotated);
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
