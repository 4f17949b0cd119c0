/**
 * What wakes the VMI controller's keys (reference.md §a.1): its VMI's own events; its launcher,
 * target and attachment pods (by controller reference, through the launcher for an attachment
 * pod, by the owner annotation for an orphan — the old owner too when the reference moved); a
 * migration of it (the controller refuses to create a pod while one runs, so it looks again when
 * one ends); the PVCs and DataVolumes its volumes use and its backend-storage PVC; and a change
 * of the KubeVirt CR's backup-hooks annotation, which every VMI's status reflects.
 */
import { DATA_VOLUMES, KUBEVIRTS, MIGRATIONS, PVCS, VMIS } from '../../shared/api/resources.ts';
import { KIND_VMI, SKIP_BACKUP_HOOKS_ANNOTATION } from '../../shared/api/well-known.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';
import { claimsOf } from '../../shared/relay/claims.ts';
import { KeyIndex } from '../../shared/relay/key-index.ts';
import { PodOwners } from '../../shared/relay/pod-owners.ts';
import { controllerRefName, LAUNCHER_PODS, type EventMapper, type KeyTarget } from '../../shared/relay/route.ts';

export function vmiMapper(): EventMapper {
  /** `ns/claim` → VMI keys whose volumes use it. */
  const claims = new KeyIndex();
  /** Every VMI key (re-enqueued when the backup-hooks annotation changes). */
  const vmis = new Set<string>();
  const pods = new PodOwners();
  const wake = (key: string): KeyTarget => ({ controller: 'vmi', key });
  return (kind, type, obj, old) => {
    const ns = obj.metadata?.namespace ?? '';
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    const deleted = type === 'DELETED';
    switch (kind) {
      case 'VirtualMachineInstance':
        if (deleted) {
          claims.delete(key);
          vmis.delete(key);
        } else {
          claims.set(key, claimsOf(ns, obj.spec?.volumes));
          vmis.add(key);
        }
        return [wake(key)];
      case 'VirtualMachineInstanceMigration':
        return typeof obj.spec?.vmiName === 'string' && obj.spec.vmiName !== '' ? [wake(`${ns}/${obj.spec.vmiName}`)] : [];
      case 'Pod': {
        const vmiKey = pods.observe(obj, deleted);
        const out = vmiKey ? [wake(vmiKey)] : [];
        // The old owner, too, when the controller reference changed.
        const oldVmi = old ? controllerRefName(old, KIND_VMI) : undefined;
        if (oldVmi && `${ns}/${oldVmi}` !== vmiKey) out.push(wake(`${ns}/${oldVmi}`));
        return out;
      }
      case 'PersistentVolumeClaim':
      case 'DataVolume': {
        // A backend-storage PVC (persistent TPM/EFI) names its VMI by label, as KubeVirt's PVC handler reads it.
        const backendFor = kind === 'PersistentVolumeClaim' ? obj.metadata?.labels?.['persistent-state-for'] : undefined;
        return [...claims.get(key).map(wake), ...(backendFor ? [wake(`${ns}/${backendFor}`)] : [])];
      }
      case 'KubeVirt': {
        const before = old?.metadata?.annotations?.[SKIP_BACKUP_HOOKS_ANNOTATION];
        const after = obj.metadata?.annotations?.[SKIP_BACKUP_HOOKS_ANNOTATION];
        // A change seen on a relist (the watch was down when it happened) counts as well; with no
        // previous object (the first list) there is nothing to compare and every VMI is listed anyway.
        return (type === 'MODIFIED' || type === 'RELIST') && old !== undefined && before !== after ? [...vmis].map(wake) : [];
      }
      default:
        return [];
    }
  };
}

/** What wakes the VMI controller's keys. */
export const vmiWakes = defineWakes({
  controller: 'vmi',
  watches: [{ res: VMIS }, LAUNCHER_PODS, { res: PVCS }, { res: DATA_VOLUMES }, { res: KUBEVIRTS }, { res: MIGRATIONS }],
  mapper: vmiMapper,
});
