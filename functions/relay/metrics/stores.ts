/**
 * The small indexes the KubeVirt collectors read besides VMIs and VMs, each filled from the
 * relay's watch events: launcher pods by the VMI that created them, migrations (by name and by
 * UID), claims' sizes, instance types' and preferences' vendors and specs, and the cluster
 * configuration from the KubeVirt CR.
 */
import type {
  VirtualMachineInstanceMigration,
  VirtualMachineInstancetypeSpec,
  VirtualMachinePreferenceSpec,
} from '../../../shared/api/index.ts';
import { parseQuantity, quantityValue } from '../../../shared/api/quantity.ts';
import { CREATED_BY_LABEL, MEMORY_OVERHEAD_BYTES_ANNOTATION } from '../../../shared/api/well-known.ts';
import type { WatchedObject } from '../../../shared/relay/route.ts';
import type { TypeRef } from './vmi-record.ts';
import { unixSeconds } from './vmi-record.ts';

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function keyOf(obj: WatchedObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

interface PodInfo {
  readonly name: string;
  readonly node: string;
  readonly running: boolean;
  /** The memory overhead the template service rendered the launcher with (its annotation), bytes. */
  readonly overhead: number | undefined;
}

/** Launcher pods by the UID of the VMI that created them (`kubevirt.io/created-by`). */
export class PodIndex {
  readonly #byVmi = new Map<string, Map<string, PodInfo>>();
  readonly #vmiOf = new Map<string, string>();

  observe(deleted: boolean, pod: WatchedObject): void {
    const key = keyOf(pod);
    const before = this.#vmiOf.get(key);
    if (before !== undefined) {
      const set = this.#byVmi.get(before);
      set?.delete(key);
      if (set?.size === 0) this.#byVmi.delete(before);
      this.#vmiOf.delete(key);
    }
    const vmiUid = pod.metadata?.labels?.[CREATED_BY_LABEL];
    if (deleted || !vmiUid) return;
    const spec = pod.spec as { nodeName?: string } | undefined;
    const status = pod.status as { phase?: string } | undefined;
    let set = this.#byVmi.get(vmiUid);
    if (!set) this.#byVmi.set(vmiUid, (set = new Map()));
    const overhead = Number(pod.metadata?.annotations?.[MEMORY_OVERHEAD_BYTES_ANNOTATION]);
    set.set(key, { name: pod.metadata?.name ?? '', node: spec?.nodeName ?? '', running: status?.phase === 'Running', overhead: Number.isFinite(overhead) && pod.metadata?.annotations?.[MEMORY_OVERHEAD_BYTES_ANNOTATION] ? overhead : undefined });
    this.#vmiOf.set(key, vmiUid);
  }

  /** The memory overhead a launcher pod of the VMI was rendered with (the first that says), bytes. */
  overheadOf(vmiUid: string): number | undefined {
    for (const p of this.#byVmi.get(vmiUid)?.values() ?? []) if (p.overhead !== undefined) return p.overhead;
    return undefined;
  }

  /** KubeVirt's `vmi_pod`: a Running pod of the VMI on the VMI's node; '' when there is none. */
  runningPodOn(vmiUid: string, node: string): string {
    for (const p of this.#byVmi.get(vmiUid)?.values() ?? []) if (p.running && p.node === node) return p.name;
    return '';
  }
}

/** What the migration collector keeps of one migration. */
export interface MigrationInfo {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly vmiName: string;
  readonly phase: string;
  /** Epoch ms of creation; the start of the from-creation histogram. */
  readonly createdMs: number | undefined;
}

/** Migrations by `namespace/name`, and their names by UID (the VMI's migration state names the UID). */
export class MigrationIndex {
  readonly all = new Map<string, MigrationInfo>();
  readonly #nameByUid = new Map<string, string>();

  /** Records the migration; answers what was known of it before. */
  observe(deleted: boolean, m: VirtualMachineInstanceMigration): MigrationInfo | undefined {
    const key = keyOf(m as WatchedObject);
    const before = this.all.get(key);
    if (before) this.#nameByUid.delete(before.uid);
    if (deleted) {
      this.all.delete(key);
      return before;
    }
    const created = unixSeconds(m.metadata?.creationTimestamp);
    const info: MigrationInfo = {
      namespace: m.metadata?.namespace ?? '',
      name: m.metadata?.name ?? '',
      uid: m.metadata?.uid ?? '',
      vmiName: m.spec?.vmiName ?? '',
      phase: m.status?.phase ?? '',
      createdMs: created === undefined ? undefined : created * 1000,
    };
    this.all.set(key, info);
    if (info.uid) this.#nameByUid.set(info.uid, info.name);
    return before;
  }

  nameOf(uid: string): string {
    return this.#nameByUid.get(uid) ?? '';
  }
}

/** A claim's requested storage (bytes) and volume mode. */
export interface ClaimInfo {
  readonly requestBytes: number;
  readonly volumeMode: string;
}

/** Claims by `namespace/name`. */
export class ClaimIndex {
  readonly #claims = new Map<string, ClaimInfo>();

  observe(deleted: boolean, pvc: WatchedObject): void {
    const key = keyOf(pvc);
    if (deleted) {
      this.#claims.delete(key);
      return;
    }
    const spec = pvc.spec as { resources?: { requests?: { storage?: string | number } }; volumeMode?: string } | undefined;
    let requestBytes = 0;
    try {
      const storage = spec?.resources?.requests?.storage;
      if (storage !== undefined) requestBytes = Number(quantityValue(parseQuantity(storage)));
    } catch {
      // An unreadable request sizes the disk as 0, as a missing one does.
    }
    this.#claims.set(key, { requestBytes, volumeMode: spec?.volumeMode ?? '' });
  }

  get(namespace: string, name: string): ClaimInfo | undefined {
    return this.#claims.get(`${namespace}/${name}`);
  }
}

/** Vendors whose instance types and preferences KubeVirt names in its metrics; others are `<other>`. */
const REPORTED_VENDORS = new Set(['kubevirt.io', 'redhat.com']);
const VENDOR_LABEL = 'instancetype.kubevirt.io/vendor';

interface TypeInfo<S> {
  readonly name: string;
  readonly vendor: string;
  readonly spec: S | undefined;
}

/** Instance types and preferences, namespaced and cluster-wide, by key. */
export class TypeIndex<S> {
  readonly #own = new Map<string, TypeInfo<S>>();
  readonly #cluster = new Map<string, TypeInfo<S>>();

  observe(cluster: boolean, deleted: boolean, obj: WatchedObject): void {
    const map = cluster ? this.#cluster : this.#own;
    const key = keyOf(obj);
    if (deleted) map.delete(key);
    else map.set(key, { name: obj.metadata?.name ?? '', vendor: obj.metadata?.labels?.[VENDOR_LABEL] ?? '', spec: obj.spec as S | undefined });
  }

  /** KubeVirt's label value: '' with no reference, the name for a listed vendor, else `<other>` (unknown objects too). */
  labelOf(ref: TypeRef | undefined): string {
    if (!ref) return '';
    const info = (ref.cluster ? this.#cluster : this.#own).get(ref.key);
    return info && REPORTED_VENDORS.has(info.vendor) ? info.name : '<other>';
  }

  specOf(ref: TypeRef | undefined): S | undefined {
    return ref ? (ref.cluster ? this.#cluster : this.#own).get(ref.key)?.spec : undefined;
  }
}

export type InstancetypeIndex = TypeIndex<VirtualMachineInstancetypeSpec>;
export type PreferenceIndex = TypeIndex<VirtualMachinePreferenceSpec>;
