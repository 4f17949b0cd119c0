/**
 * The VM collector's families at scrape time (KubeVirt's `vmstats_collector`): disk sizes, info,
 * resource requests and limits (with the VM's instance type applied when it names one), the
 * status-transition timestamps and labels, creation time and vNIC info.
 */
import { VM, VM_STATUS_TIMESTAMPS } from '../../../shared/metrics/kubevirt/catalog.ts';
import type { ExpositionWriter } from '../../../shared/metrics/exposition.ts';
import { applyInstancetype } from '../../../shared/instancetype/apply-instancetype.ts';
import type { ClaimIndex, InstancetypeIndex, PreferenceIndex } from './stores.ts';
import type { VmRecord } from './vm-record.ts';
import { resourceSamples, type ResourceSample } from './vm-resources.ts';
import { statusGroupOf } from './vm-status.ts';

/** What the VM families read besides the VMs. */
export interface VmSources {
  readonly claims: ClaimIndex;
  readonly instancetypes: InstancetypeIndex;
  readonly preferences: PreferenceIndex;
}

/** The VM's resources with its instance type applied (KubeVirt applies it to a copy; a conflict leaves the copy as it was). */
function resourcesOf(r: VmRecord, src: VmSources): readonly ResourceSample[] {
  if (!r.spec) return r.resources;
  const it = src.instancetypes.specOf(r.applies.instancetype);
  if (!it) return r.resources;
  const applied = applyInstancetype('spec.template.spec', it, src.preferences.specOf(r.applies.preference), r.spec);
  return applied.conflicts.length > 0 ? r.resources : resourceSamples(applied.spec);
}

export function writeVmFamilies(out: ExpositionWriter, vms: Iterable<VmRecord>, src: VmSources): void {
  const all = [...vms];
  if (all.length === 0) return; // KubeVirt's collector reports nothing without VMs

  out.family(VM.diskAllocatedSize);
  for (const r of all) {
    for (const d of r.disks) {
      const claim = src.claims.get(r.namespace, d.claim);
      if (!claim) continue; // KubeVirt skips a disk whose claim does not exist (yet)
      out.sample(VM.diskAllocatedSize.name, VM.diskAllocatedSize.labels, [r.name, r.namespace, d.claim, claim.volumeMode, d.device], d.templateSize ?? claim.requestBytes);
    }
  }

  out.family(VM.info);
  for (const r of all) {
    out.sample(VM.info.name, VM.info.labels, [
      r.name, r.namespace, r.os, r.workload, r.flavor, r.machineType,
      src.instancetypes.labelOf(r.instancetype), src.preferences.labelOf(r.preference),
      r.printableStatus.toLowerCase(), statusGroupOf(r.printableStatus),
    ], 1);
  }

  const resources = all.map((r) => resourcesOf(r, src));
  out.family(VM.resourceRequests);
  all.forEach((r, i) => {
    for (const s of resources[i]!) if (!s.limit) out.sample(VM.resourceRequests.name, VM.resourceRequests.labels, [r.name, r.namespace, s.resource, s.unit, s.source], s.value);
  });
  out.family(VM.resourceLimits);
  all.forEach((r, i) => {
    for (const s of resources[i]!) if (s.limit) out.sample(VM.resourceLimits.name, VM.resourceLimits.labels, [r.name, r.namespace, s.resource, s.unit], s.value);
  });

  out.family(VM.labels);
  for (const r of all) if (r.labels.length > 0) out.sample(VM.labels.name, VM.labels.labels, [r.name, r.namespace], 1, r.labels);

  // The current status group's counter carries the last transition time, the other four 0.
  const current = all.map((r) => statusGroupOf(r.printableStatus));
  for (const def of VM_STATUS_TIMESTAMPS) {
    out.family(def);
    all.forEach((r, i) => out.sample(def.name, def.labels, [r.name, r.namespace], timestampGroupOf(current[i]!) === def ? r.lastTransition : 0));
  }

  out.family(VM.creationTimestamp);
  for (const r of all) if (r.created !== undefined) out.sample(VM.creationTimestamp.name, VM.creationTimestamp.labels, [r.name, r.namespace], r.created);

  out.family(VM.vnicInfo);
  for (const r of all) for (const v of r.vnics) out.sample(VM.vnicInfo.name, VM.vnicInfo.labels, [r.name, r.namespace, ...v], 1);
}

/** The counter of a status group; a status in no group counts as an error, as in KubeVirt. */
function timestampGroupOf(group: string): (typeof VM_STATUS_TIMESTAMPS)[number] {
  switch (group) {
    case 'starting':
      return VM.startingTimestamp;
    case 'running':
      return VM.runningTimestamp;
    case 'migrating':
      return VM.migratingTimestamp;
    case 'non_running':
      return VM.nonRunningTimestamp;
    default:
      return VM.errorTimestamp;
  }
}
