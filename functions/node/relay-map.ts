/**
 * The node controller's part of the relay (reference node-drain-updates §1.1): any Node event
 * wakes that node; a VMI added or updated wakes the node it runs on. VMI deletions are ignored.
 */
import type { EventMapper } from '../../shared/relay/route.ts';

export function nodeMapper(): EventMapper {
  return (kind, type, obj) => {
    if (kind === 'Node') return obj.metadata?.name ? [{ controller: 'node', key: obj.metadata.name }] : [];
    if (kind !== 'VirtualMachineInstance' || type === 'DELETED') return [];
    const nodeName = obj.status?.nodeName;
    return typeof nodeName === 'string' && nodeName !== '' ? [{ controller: 'node', key: nodeName }] : [];
  };
}
