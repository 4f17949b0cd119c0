/**
 * The node controller's part of the relay (reference node-drain-updates §1.1): any Node event
 * wakes that node; a VMI added or updated wakes the node it runs on — unless the relay can tell
 * that node's virt-handler is alive. VMI deletions are ignored.
 *
 * Why the filter: a pass acts only on an unresponsive node (absent, or a heartbeat older than
 * five minutes, §1.2); on a responsive one it reads the node and re-arms its one-minute re-check.
 * KubeVirt's VMI handler costs it a cache read; here every VMI event was a reconcile and a node
 * GET — one per VMI in a burst. The relay keeps each node's `kubevirt.io/heartbeat` from the Node
 * events and skips the wake when the node would still be responsive a minute from now (the
 * margin covers the relay's and the function's clocks). A node not seen, deleted, or with a
 * heartbeat that does not parse is woken as before; and a node whose heartbeat goes stale with
 * no event at all is caught by its own once-a-minute re-check, as it always was.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { EventMapper, MapperEnv, WatchedObject } from '../../shared/relay/route.ts';
import { nodeLiveness } from './liveness.ts';
import { NODES, VMIS } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

/** How far ahead a node must still be responsive for a VMI event not to wake it. */
export const RESPONSIVE_MARGIN_MS = 60_000;

export function nodeMapper(env: MapperEnv = { now: Date.now }): EventMapper {
  /** The nodes seen, as their last Node event showed them. */
  const nodes = new Map<string, WatchedObject>();
  return (kind, type, obj) => {
    if (kind === 'Node') {
      const name = obj.metadata?.name;
      if (!name) return [];
      if (type === 'DELETED') nodes.delete(name);
      else nodes.set(name, obj);
      return [{ controller: 'node', key: name }];
    }
    if (kind !== 'VirtualMachineInstance' || type === 'DELETED') return [];
    const nodeName = obj.status?.nodeName;
    if (typeof nodeName !== 'string' || nodeName === '') return [];
    const node = nodes.get(nodeName);
    if (node && nodeLiveness(node as V1Node, env.now() + RESPONSIVE_MARGIN_MS).state === 'responsive') return [];
    return [{ controller: 'node', key: nodeName }];
  };
}

/** What wakes the node controller's keys. */
export const nodeWakes = defineWakes({ controller: 'node', watches: [{ res: NODES }, { res: VMIS }], mapper: nodeMapper });
