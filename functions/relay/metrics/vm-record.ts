/**
 * What the VM collector keeps of one VM, taken from each watch event: the label values of
 * KubeVirt's `vmstats_collector` that depend on the VM alone, its resource series (recomputed at
 * scrape time only for a VM that names an instance type, whose spec may change), its disks'
 * claims (sized at scrape time from the claims the relay watches) and its labels.
 */
import type { VirtualMachine, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { resourceSamples, type ResourceSample } from './vm-resources.ts';
import { SYSTEM_ANNOTATION_PREFIX, unixSeconds, type TypeRef } from './vmi-record.ts';
import { vnicLabels, type VnicLabels } from './vnic.ts';
import { quantityValue, parseQuantity } from '../../../shared/api/quantity.ts';

/** One disk backed by a claim: its claim, the disk (volume) name, and the size its DataVolume template asks for. */
export interface DiskClaim {
  readonly claim: string;
  readonly device: string;
  /** From the VM's DataVolume template of that name (0 when it names no size); undefined: use the claim's request. */
  readonly templateSize: number | undefined;
}

export interface VmRecord {
  readonly namespace: string;
  readonly name: string;
  readonly os: string;
  readonly workload: string;
  readonly flavor: string;
  readonly machineType: string;
  readonly instancetype: TypeRef | undefined;
  readonly preference: TypeRef | undefined;
  /** What the resources apply: as the labels, but a matcher without a kind means the cluster-wide object (KubeVirt's spec finders). */
  readonly applies: { readonly instancetype: TypeRef | undefined; readonly preference: TypeRef | undefined };
  /** status.printableStatus as it is. */
  readonly printableStatus: string;
  /** Latest lastTransitionTime of the Ready, Failure and Paused conditions, epoch s; -1 with none. */
  readonly lastTransition: number;
  readonly created: number | undefined;
  readonly vnics: readonly VnicLabels[];
  readonly disks: readonly DiskClaim[];
  /** `[label_<sanitized key>, value]` of the VM's and its template's labels. */
  readonly labels: readonly (readonly [string, string])[];
  /** Resource series of the template as written (no instance type applied). */
  readonly resources: readonly ResourceSample[];
  /** The template spec, kept only when an instance type may change the resources at scrape time. */
  readonly spec: VirtualMachineInstanceSpec | undefined;
  readonly hasTemplate: boolean;
}

const CONDITIONS_OF_STATUS = new Set(['Ready', 'Failure', 'Paused']);

/** KubeVirt's label-name sanitizing: anything outside `[A-Za-z0-9_]` → `_`, and a leading `_` unless it starts with a letter or `_`. */
export function sanitizeLabelName(name: string): string {
  const s = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[a-zA-Z_]/.test(s) ? s : `_${s}`;
}

/** The matcher's kind picks the namespaced or cluster object; any other kind (or none) names nothing. */
function matcherRef(m: { kind?: string; name?: string } | undefined, namespace: string, nsKind: string, clusterKind: string, kindless?: 'cluster'): TypeRef | undefined {
  const kind = m?.kind?.toLowerCase() || (kindless ? clusterKind : '');
  if (!m || !kind) return undefined;
  if (kind === nsKind) return { cluster: false, key: `${namespace}/${m.name ?? ''}` };
  if (kind === clusterKind) return { cluster: true, key: m.name ?? '' };
  return undefined;
}

function storageOf(req: Record<string, unknown> | undefined): number {
  const q = req?.['storage'];
  if (q === undefined || q === null) return 0;
  try {
    return Number(quantityValue(parseQuantity(q as string | number)));
  } catch {
    return 0;
  }
}

function disksOf(vm: VirtualMachine): DiskClaim[] {
  const out: DiskClaim[] = [];
  for (const vol of vm.spec?.template?.spec?.volumes ?? []) {
    const claim = vol.persistentVolumeClaim?.claimName ?? vol.dataVolume?.name;
    if (!claim) continue;
    let templateSize: number | undefined;
    if (!vol.persistentVolumeClaim && vol.dataVolume) {
      const t = (vm.spec.dataVolumeTemplates ?? []).find((d) => d.metadata?.name === claim);
      const spec = t?.spec as { pvc?: { resources?: { requests?: Record<string, unknown> } }; storage?: { resources?: { requests?: Record<string, unknown> } } } | undefined;
      if (spec?.pvc) templateSize = storageOf(spec.pvc.resources?.requests);
      else if (spec?.storage) templateSize = storageOf(spec.storage.resources?.requests);
    }
    out.push({ claim, device: vol.name, templateSize });
  }
  return out;
}

function labelsOf(vm: VirtualMachine): [string, string][] {
  const merged = { ...(vm.metadata?.labels ?? {}), ...(vm.spec?.template?.metadata?.labels ?? {}) };
  // Two keys may sanitize to one name; the later wins, as in KubeVirt's map.
  const byName = new Map<string, string>();
  for (const [k, v] of Object.entries(merged)) byName.set(`label_${sanitizeLabelName(k)}`, v);
  return [...byName];
}

/** The record of `vm` as the event shows it. */
export function vmRecord(vm: VirtualMachine): VmRecord {
  const meta = vm.metadata ?? {};
  const namespace = meta.namespace ?? '';
  const template = vm.spec?.template;
  const annotations = (template?.metadata?.annotations ?? {}) as Record<string, string>;
  let lastTransition = -1;
  for (const c of vm.status?.conditions ?? []) {
    if (!CONDITIONS_OF_STATUS.has(c.type)) continue;
    // A condition without a time counts as the zero time, as Go's zero Time.Unix() does.
    const t = unixSeconds(c.lastTransitionTime) ?? -62135596800;
    if (t > lastTransition) lastTransition = t;
  }
  const instancetype = matcherRef(vm.spec?.instancetype, namespace, 'virtualmachineinstancetype', 'virtualmachineclusterinstancetype');
  const preference = matcherRef(vm.spec?.preference, namespace, 'virtualmachinepreference', 'virtualmachineclusterpreference');
  return {
    namespace,
    name: meta.name ?? '',
    os: annotations[`${SYSTEM_ANNOTATION_PREFIX}os`] ?? '',
    workload: annotations[`${SYSTEM_ANNOTATION_PREFIX}workload`] ?? '',
    flavor: annotations[`${SYSTEM_ANNOTATION_PREFIX}flavor`] ?? '',
    machineType: template?.spec?.domain?.machine?.type ?? '',
    instancetype,
    preference,
    applies: {
      instancetype: matcherRef(vm.spec?.instancetype, namespace, 'virtualmachineinstancetype', 'virtualmachineclusterinstancetype', 'cluster'),
      preference: matcherRef(vm.spec?.preference, namespace, 'virtualmachinepreference', 'virtualmachineclusterpreference', 'cluster'),
    },
    printableStatus: vm.status?.printableStatus ?? '',
    lastTransition,
    created: unixSeconds(meta.creationTimestamp),
    vnics: template ? vnicLabels(template.spec?.domain?.devices?.interfaces, template.spec?.networks) : [],
    disks: template ? disksOf(vm) : [],
    labels: labelsOf(vm),
    resources: template ? resourceSamples(template.spec) : [],
    spec: template && vm.spec.instancetype ? structuredClone(template.spec) : undefined,
    hasTemplate: template !== undefined,
  };
}
