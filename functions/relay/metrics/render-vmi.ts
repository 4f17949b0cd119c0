/**
 * The VMI collector's families at scrape time (KubeVirt's `vmistats_collector`): info,
 * non-evictable, addresses, migration start/end, vNIC info and launcher memory overhead, one pass
 * per family over the VMIs the relay knows.
 */
import { VMI } from '../../../shared/metrics/kubevirt/catalog.ts';
import type { ExpositionWriter } from '../../../shared/metrics/exposition.ts';
import { isEvictable, type VmiRecord } from './vmi-record.ts';
import type { InstancetypeIndex, MigrationIndex, PodIndex, PreferenceIndex } from './stores.ts';

/** What the VMI families read besides the VMIs. */
export interface VmiSources {
  readonly pods: PodIndex;
  readonly migrations: MigrationIndex;
  readonly instancetypes: InstancetypeIndex;
  readonly preferences: PreferenceIndex;
  readonly clusterEvictionStrategy: string | undefined;
}

export function writeVmiFamilies(out: ExpositionWriter, vmis: Iterable<VmiRecord>, src: VmiSources): void {
  const all = [...vmis];
  if (all.length === 0) return; // KubeVirt's collector reports nothing without VMIs
  const evictable = all.map((r) => isEvictable(r, src.clusterEvictionStrategy));

  out.family(VMI.info);
  all.forEach((r, i) =>
    out.sample(VMI.info.name, VMI.info.labels, [
      r.node, r.namespace, r.name, r.phase.toLowerCase(), r.os, r.workload, r.flavor,
      src.instancetypes.labelOf(r.instancetype), src.preferences.labelOf(r.preference),
      r.kernelRelease, r.machineType, r.guestArch, r.guestName, r.guestVersionId,
      String(evictable[i]), String(r.outdated), src.pods.runningPodOn(r.uid, r.node),
    ], 1),
  );

  out.family(VMI.nonEvictable);
  all.forEach((r, i) => out.sample(VMI.nonEvictable.name, VMI.nonEvictable.labels, [r.node, r.namespace, r.name], evictable[i] ? 0 : 1));

  out.family(VMI.addresses);
  for (const r of all) for (const a of r.addresses) out.sample(VMI.addresses.name, VMI.addresses.labels, [r.node, r.namespace, r.name, ...a], 1);

  out.family(VMI.migrationStart);
  for (const r of all) {
    if (r.migration?.start === undefined) continue;
    out.sample(VMI.migrationStart.name, VMI.migrationStart.labels, [r.node, r.namespace, r.name, src.migrations.nameOf(r.migration.uid)], r.migration.start);
  }

  out.family(VMI.migrationEnd);
  for (const r of all) {
    if (r.migration?.end === undefined) continue;
    out.sample(VMI.migrationEnd.name, VMI.migrationEnd.labels, [r.node, r.namespace, r.name, src.migrations.nameOf(r.migration.uid), r.migration.status], r.migration.end);
  }

  out.family(VMI.vnicInfo);
  for (const r of all) for (const v of r.vnics) out.sample(VMI.vnicInfo.name, VMI.vnicInfo.labels, [r.name, r.namespace, ...v], 1);

  // KubeVirt estimates the overhead of a VMI that reports none; here the launcher pod's rendering
  // says it (the relay carries no template service), and a VMI without a pod yet has no series.
  out.family(VMI.memoryOverhead);
  for (const r of all) {
    const bytes = r.memoryOverhead ?? src.pods.overheadOf(r.uid);
    if (bytes !== undefined) out.sample(VMI.memoryOverhead.name, VMI.memoryOverhead.labels, [r.namespace, r.name], bytes);
  }
}
