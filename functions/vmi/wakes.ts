/**
 * What wakes the VMI controller's keys (reference.md §a.1): its VMI's own events; its launcher,
 * target and attachment pods (by controller reference, through the launcher for an attachment
 * pod, by the owner annotation for an orphan — the old owner too when the reference moved); a
 * migration of it (the controller refuses to create a pod while one runs, so it looks again when
 * one ends); the PVCs and DataVolumes its volumes use and its backend-storage PVC; and a change
 * of the KubeVirt CR's backup-hooks annotation, which every VMI's status reflects.
 */
import { DATA_VOLUMES, KUBEVIRTS, MIGRATIONS, PODS, PVCS, RESOURCE_QUOTAS, VMIS } from '../../shared/api/resources.ts';
import { KIND_VMI, SKIP_BACKUP_HOOKS_ANNOTATION, vmiPodsSelector } from '../../shared/api/well-known.ts';
import { BACKEND_PVC_LABEL } from '../../shared/storage/backend-storage.ts';
import { defineWakes, type ViewCause } from '../../shared/reconcile/define-controller.ts';
import { claimsOf } from '../../shared/relay/claims.ts';
import { KeyIndex } from '../../shared/relay/key-index.ts';
import { PodOwners } from '../../shared/relay/pod-owners.ts';
import { controllerRefName, LAUNCHER_PODS, type EventMapper, type KeyTarget } from '../../shared/relay/route.ts';
import type { ViewRead, ViewSource } from '../../shared/relay/view.ts';

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

/**
 * What a VMI key's message carries (shared/relay/view.ts): the VMI and its pods, the reads every
 * pass starts with (reconcile.ts `observe`), and before the launcher pod exists, its leftover
 * backend-storage claim (the check before a launcher pod is created) and the namespace's
 * ResourceQuotas (the automatic-limits check of the render, which KubeVirt's template service
 * answers from its informer, empty included: a quota the relay has not seen yet makes the pod
 * creation refused by quota admission, and the retry reads anew). While the VMI is not yet
 * scheduled (no phase, or Pending) an empty answer is an answer, as KubeVirt's informer's is: the
 * pods of such a VMI are only the one its pod creation record tells of, and the expectations gate
 * re-reads from the API server whenever there is a record — provided the reconcile is served that
 * same VMI (one it reads anew, past its write fence, may be further along).
 */
function vmiViewReads(key: string, source: ViewSource): ViewRead[] {
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  const vmi = source.get(VMIS, namespace, name);
  const uid = vmi?.metadata?.uid;
  const phase = typeof vmi?.status?.phase === 'string' ? vmi.status.phase : '';
  const unscheduled = phase === '' || phase === 'Pending';
  const self = { resource: VMIS, namespace, name };
  return [
    { resource: VMIS, namespace, name },
    ...(uid ? [{ resource: PODS, namespace, labelSelector: vmiPodsSelector(uid), ...(unscheduled ? { trustEmptyWith: self } : {}) }] : []),
    ...(unscheduled
      ? [
          { resource: PVCS, namespace, labelSelector: `${BACKEND_PVC_LABEL}=${name}`, trustEmptyWith: self },
          { resource: RESOURCE_QUOTAS, namespace, trustEmptyWith: self },
        ]
      : []),
  ];
}

/**
 * A pass that creates the launcher pod writes the VMI's status right after (Pending → Scheduling):
 * the pod's ADDED event reaches the relay first, and a view sent with it would still show the VMI
 * as it was — its pass would recompute that status and have its write refused (409). So the key
 * waits up to VIEW_HOLD_MS for the VMI's own event, which replaces the message and sends it at
 * once with the new VMI (one pass instead of two); a VMI the relay already has at least as new as
 * the pod, or a pod that is not new, goes at once.
 */
export const VIEW_HOLD_MS = 50;

function vmiViewHold(key: string, event: ViewCause, source: ViewSource): number {
  if (event.kind !== 'Pod' || event.type !== 'ADDED') return 0;
  const slash = key.indexOf('/');
  const vmi = source.get(VMIS, key.slice(0, slash), key.slice(slash + 1));
  const vmiRv = Number(vmi?.metadata?.resourceVersion);
  const podRv = Number(event.object.metadata?.resourceVersion);
  return Number.isFinite(vmiRv) && Number.isFinite(podRv) && vmiRv < podRv ? VIEW_HOLD_MS : 0;
}

/** What wakes the VMI controller's keys, and what their messages carry. */
export const vmiWakes = defineWakes({
  controller: 'vmi',
  // ResourceQuotas wake nothing (the mapper ignores them): they are watched for the view.
  watches: [{ res: VMIS }, LAUNCHER_PODS, { res: PVCS }, { res: DATA_VOLUMES }, { res: KUBEVIRTS }, { res: MIGRATIONS }, { res: RESOURCE_QUOTAS }],
  mapper: vmiMapper,
  view: { resources: [VMIS, PODS, PVCS, RESOURCE_QUOTAS], reads: vmiViewReads, holdMs: vmiViewHold },
});
