/**
 * The evacuation controller's part of the relay (reference node-drain-updates §2.1), keyed by
 * node name: Node events wake the node; VMI events wake the node the VMI runs on; a migration's
 * add wakes the node its evacuation annotation names, and its other events wake the node of its
 * VMI (looked up in a small VMI → node index, the relay's stand-in for the VMI informer).
 */
import { EVACUATION_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import type { EventMapper, KeyTarget } from '../../shared/relay/route.ts';

export function evacuationMapper(): EventMapper {
  /** `ns/name` of each VMI seen → its `status.nodeName`. */
  const vmiNodes = new Map<string, string>();
  const wake = (node: string | undefined): KeyTarget[] => (node ? [{ controller: 'evacuation', key: node }] : []);
  return (kind, type, obj) => {
    const ns = obj.metadata?.namespace ?? '';
    switch (kind) {
      case 'Node':
        return wake(obj.metadata?.name);
      case 'VirtualMachineInstance': {
        const key = `${ns}/${obj.metadata?.name ?? ''}`;
        const node = typeof obj.status?.nodeName === 'string' ? obj.status.nodeName : '';
        if (type === 'DELETED' || !node) vmiNodes.delete(key);
        else vmiNodes.set(key, node);
        return wake(node);
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
