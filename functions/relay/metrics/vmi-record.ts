/**
 * What the VMI collector keeps of one VMI, taken from each watch event (the reflector keeps only
 * stubs): the label values KubeVirt's `vmistats_collector` reads from its informer cache, already
 * resolved where they depend on the VMI alone, and the few inputs of what depends on other
 * objects at scrape time (instance type vendors, the running launcher pod and its memory
 * overhead, the migration's name, the cluster's eviction strategy).
 */
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { parseQuantity, quantityValue } from '../../../shared/api/quantity.ts';
import { OUTDATED_LAUNCHER_IMAGE_LABEL } from '../../../shared/api/well-known.ts';
import {
  CLUSTER_INSTANCETYPE_ANNOTATION,
  CLUSTER_PREFERENCE_ANNOTATION,
  INSTANCETYPE_ANNOTATION,
  PREFERENCE_ANNOTATION,
} from '../../../shared/instancetype/well-known.ts';
import { vnicLabels, type VnicLabels } from './vnic.ts';

/** A reference to an instance type or preference: namespaced (`ns/name`) or cluster-wide (`name`). */
export interface TypeRef {
  readonly cluster: boolean;
  readonly key: string;
}

/** `[vnic_name, interface_name, address, type]` of `kubevirt_vmi_status_addresses`. */
export type AddressLabels = readonly [string, string, string, string];

export interface VmiRecord {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  /** status.phase as it is ('' unset). */
  readonly phase: string;
  readonly os: string;
  readonly workload: string;
  readonly flavor: string;
  readonly instancetype: TypeRef | undefined;
  readonly preference: TypeRef | undefined;
  readonly kernelRelease: string;
  readonly guestArch: string;
  readonly guestName: string;
  readonly guestVersionId: string;
  readonly machineType: string;
  readonly outdated: boolean;
  /** spec.evictionStrategy (the cluster's applies when unset). */
  readonly evictionStrategy: string | undefined;
  /** The LiveMigratable condition's status, when the condition is there. */
  readonly migratableCondition: string | undefined;
  readonly addresses: readonly AddressLabels[];
  readonly vnics: readonly VnicLabels[];
  readonly migration: { readonly uid: string; readonly start: number | undefined; readonly end: number | undefined; readonly status: string } | undefined;
  /** status.memory.memoryOverhead in bytes; without it the launcher pod's annotation is read at scrape time. */
  readonly memoryOverhead: number | undefined;
}

/** The `vm.kubevirt.io/` annotations KubeVirt reports as os, workload and flavor. */
export const SYSTEM_ANNOTATION_PREFIX = 'vm.kubevirt.io/';

function typeRef(annotations: Readonly<Record<string, string>>, namespace: string, nsKey: string, clusterKey: string): TypeRef | undefined {
  const own = annotations[nsKey];
  if (own !== undefined) return { cluster: false, key: `${namespace}/${own}` };
  const cluster = annotations[clusterKey];
  return cluster !== undefined ? { cluster: true, key: cluster } : undefined;
}

/** Epoch seconds of a Kubernetes timestamp, whole seconds as Go's `Unix()`; undefined when absent or unreadable. */
export function unixSeconds(t: unknown): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(String(t));
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

function addressesOf(vmi: VirtualMachineInstance): AddressLabels[] {
  const out: AddressLabels[] = [];
  for (const iface of vmi.status?.interfaces ?? []) {
    const ip = iface.ipAddress ?? '';
    // An interface with neither a name nor an address would repeat the VMI's label set.
    if (ip === '' && !iface.name && !iface.interfaceName) continue;
    out.push([iface.name ?? '', iface.interfaceName ?? '', ip, ip === '' ? 'SystemInterface' : 'ExternalInterface']);
  }
  return out;
}

function migrationOf(vmi: VirtualMachineInstance): VmiRecord['migration'] {
  const m = vmi.status?.migrationState;
  if (!m) return undefined;
  const status = !m.completed ? '' : m.failed ? 'failed' : 'succeeded';
  return { uid: m.migrationUid ?? '', start: unixSeconds(m.startTimestamp), end: unixSeconds(m.endTimestamp), status };
}

/** The overhead the VMI reports (what its launcher pod was rendered with); undefined when it reports none. */
function overheadOf(vmi: VirtualMachineInstance): number | undefined {
  const reported = vmi.status?.memory?.memoryOverhead;
  if (reported === undefined) return undefined;
  try {
    return Number(quantityValue(parseQuantity(reported)));
  } catch {
    return undefined; // an unreadable status: the pod's annotation may still say
  }
}

/** The record of `vmi` as the event shows it. */
export function vmiRecord(vmi: VirtualMachineInstance): VmiRecord {
  const meta = vmi.metadata ?? {};
  const annotations = meta.annotations ?? {};
  const namespace = meta.namespace ?? '';
  const guest = vmi.status?.guestOSInfo ?? {};
  return {
    uid: meta.uid ?? '',
    namespace,
    name: meta.name ?? '',
    node: vmi.status?.nodeName ?? '',
    phase: vmi.status?.phase ?? '',
    os: annotations[`${SYSTEM_ANNOTATION_PREFIX}os`] ?? '',
    workload: annotations[`${SYSTEM_ANNOTATION_PREFIX}workload`] ?? '',
    flavor: annotations[`${SYSTEM_ANNOTATION_PREFIX}flavor`] ?? '',
    instancetype: typeRef(annotations, namespace, INSTANCETYPE_ANNOTATION, CLUSTER_INSTANCETYPE_ANNOTATION),
    preference: typeRef(annotations, namespace, PREFERENCE_ANNOTATION, CLUSTER_PREFERENCE_ANNOTATION),
    kernelRelease: guest.kernelRelease ?? '',
    guestArch: guest.machine ?? '',
    guestName: guest.name ?? '',
    guestVersionId: guest.versionId ?? '',
    machineType: vmi.status?.machine?.type ?? '',
    outdated: meta.labels?.[OUTDATED_LAUNCHER_IMAGE_LABEL] !== undefined,
    evictionStrategy: vmi.spec?.evictionStrategy,
    migratableCondition: vmi.status?.conditions?.find((c) => c.type === 'LiveMigratable')?.status,
    addresses: addressesOf(vmi),
    vnics: vnicLabels(vmi.spec?.domain?.devices?.interfaces, vmi.spec?.networks),
    migration: migrationOf(vmi),
    memoryOverhead: overheadOf(vmi),
  };
}

/**
 * KubeVirt's `isVMEvictable`: a VMI that would live-migrate on eviction is evictable only with a
 * LiveMigratable condition that is not False; no condition yet counts as not migratable (the
 * alert it feeds prefers to be conservative).
 */
export function isEvictable(r: VmiRecord, clusterEvictionStrategy: string | undefined): boolean {
  const strategy = r.evictionStrategy ?? clusterEvictionStrategy;
  const migratesOnEviction = strategy === 'LiveMigrate' || (strategy === 'LiveMigrateIfPossible' && r.migratableCondition === 'True');
  if (!migratesOnEviction) return true;
  return r.migratableCondition !== undefined && r.migratableCondition !== 'False';
}
