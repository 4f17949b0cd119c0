/**
 * The snapshot controller's part of the relay (reference §1.1), onto its one key per
 * `namespace/name` (a snapshot, and the VM of that name):
 * - a VirtualMachineSnapshot → its key;
 * - a VirtualMachineSnapshotContent → its snapshot's (`spec.virtualMachineSnapshotName`);
 * - a VolumeSnapshot → the snapshot of the content that controls it;
 * - a VirtualMachine → its key (volumeSnapshotStatuses) and the snapshots of it;
 * - a VirtualMachineInstance → the snapshots of its VM;
 * - a PersistentVolumeClaim or DataVolume → the VMs whose volumes name it;
 * - a VolumeSnapshotClass → every VM and every snapshot of one.
 * Indexes, names only: snapshots by source VM, contents by snapshot, VMs by claim.
 */
import type { EventMapper, KeyTarget, WatchedObject } from '../../shared/relay/route.ts';
import { controllerRefName } from '../../shared/relay/route.ts';
import { VM_SNAPSHOTS, VM_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS, VOLUME_SNAPSHOT_CLASSES, VMS, VMIS, PVCS, DATA_VOLUMES } from '../../shared/api/resources.ts';
import { defineWakes } from '../../shared/reconcile/define-controller.ts';

const nsOf = (o: WatchedObject) => o.metadata?.namespace ?? '';
const keyOf = (ns: string, name: string) => `${ns}/${name}`;

/** owner → values and value → owners, so an owner's entries are replaced without a scan. */
class Index {
  readonly #byValue = new Map<string, Set<string>>();
  readonly #byOwner = new Map<string, readonly string[]>();
  set(owner: string, values: readonly string[]): void {
    this.drop(owner);
    this.#byOwner.set(owner, values);
    for (const v of values) {
      if (!this.#byValue.has(v)) this.#byValue.set(v, new Set());
      this.#byValue.get(v)!.add(owner);
    }
  }
  drop(owner: string): void {
    for (const v of this.#byOwner.get(owner) ?? []) {
      const owners = this.#byValue.get(v);
      owners?.delete(owner);
      if (owners?.size === 0) this.#byValue.delete(v);
    }
    this.#byOwner.delete(owner);
  }
  get(value: string): string[] {
    return [...(this.#byValue.get(value) ?? [])];
  }
}

interface VolumeRef {
  name?: string;
  dataVolume?: { name?: string };
  persistentVolumeClaim?: { claimName?: string };
  memoryDump?: { claimName?: string };
}

function claimsOfVm(vm: WatchedObject): string[] {
  const template = vm.spec?.template as { spec?: { volumes?: VolumeRef[] } } | undefined;
  return (template?.spec?.volumes ?? []).map((v) => v.dataVolume?.name ?? v.persistentVolumeClaim?.claimName ?? v.memoryDump?.claimName).filter((c): c is string => c !== undefined);
}

/** The snapshot mapper with its indexes (one per relay). */
export function snapshotMapper(): EventMapper {
  const snapshotsByVm = new Index(); // snapshot key → ns/vm
  const snapshotByContent = new Map<string, string>(); // ns/content → snapshot name
  const vmsByClaim = new Index(); // vm key → ns/claim
  const vms = new Set<string>();
  const to = (key: string): KeyTarget => ({ controller: 'snapshot', key });
  const snapshotsOf = (vmKey: string) => snapshotsByVm.get(vmKey).map(to);
  return (kind, type, obj) => {
    const ns = nsOf(obj);
    const name = obj.metadata?.name ?? '';
    const key = keyOf(ns, name);
    switch (kind) {
      case 'VirtualMachineSnapshot': {
        const source = obj.spec?.source as { apiGroup?: string; kind?: string; name?: string } | undefined;
        if (type === 'DELETED' || source?.kind !== 'VirtualMachine' || (source.apiGroup ?? 'kubevirt.io') !== 'kubevirt.io') snapshotsByVm.drop(key);
        else snapshotsByVm.set(key, [keyOf(ns, source.name ?? '')]);
        return [to(key)];
      }
      case 'VirtualMachineSnapshotContent': {
        const snapshot = obj.spec?.virtualMachineSnapshotName as string | undefined;
        if (type === 'DELETED') snapshotByContent.delete(key);
        else if (snapshot) snapshotByContent.set(key, snapshot);
        return snapshot ? [to(keyOf(ns, snapshot))] : [];
      }
      case 'VolumeSnapshot': {
        const content = controllerRefName(obj, 'VirtualMachineSnapshotContent');
        const snapshot = content ? snapshotByContent.get(keyOf(ns, content)) : undefined;
        return snapshot ? [to(keyOf(ns, snapshot))] : [];
      }
      case 'VirtualMachine':
        if (type === 'DELETED') {
          vms.delete(key);
          vmsByClaim.drop(key);
        } else {
          vms.add(key);
          vmsByClaim.set(key, claimsOfVm(obj).map((c) => keyOf(ns, c)));
        }
        return [to(key), ...snapshotsOf(key).filter((t) => t.key !== key)];
      case 'VirtualMachineInstance':
        return snapshotsOf(key);
      case 'PersistentVolumeClaim':
      case 'DataVolume':
        return vmsByClaim.get(key).map(to);
      case 'VolumeSnapshotClass': {
        const out = new Map<string, KeyTarget>();
        for (const vm of vms) {
          out.set(vm, to(vm));
          for (const t of snapshotsOf(vm)) out.set(t.key, t);
        }
        return [...out.values()];
      }
      default:
        return [];
    }
  };
}

/** What wakes the snapshot controller's keys. */
export const snapshotWakes = defineWakes({ controller: 'snapshot', watches: [{ res: VM_SNAPSHOTS }, { res: VM_SNAPSHOT_CONTENTS }, { res: VOLUME_SNAPSHOTS }, { res: VOLUME_SNAPSHOT_CLASSES }, { res: VMS }, { res: VMIS }, { res: PVCS }, { res: DATA_VOLUMES }], mapper: snapshotMapper });
