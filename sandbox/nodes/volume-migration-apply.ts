/**
 * What the target virt-handler does with a volume migration once the migration has copied the
 * migrated volumes to their destination claims (reference-vm-vmi-depth §7; KubeVirt's
 * `finalizeMigration`): `VolumesChange` is removed and `status.migratedVolumes` cleared, and a
 * `status.volumeStatus` entry that described a source claim now describes its destination
 * (`replaceMigratedVolumesStatus`). The target pod was rendered from the VMI's spec, which the VM
 * controller had already pointed at the destination claims, so the domain runs on them from here.
 * Pure; merged into the completing step's status patch, after the hotplug fields.
 */
import type { Condition, Vmi } from './objects.ts';

const VOLUMES_CHANGE = 'VolumesChange';

interface ClaimInfo {
  claimName?: string;
  [field: string]: unknown;
}
interface MigratedVolume {
  volumeName: string;
  sourcePVCInfo?: ClaimInfo;
  destinationPVCInfo?: ClaimInfo;
}
interface VolumeStatusEntry {
  name: string;
  persistentVolumeClaimInfo?: ClaimInfo;
  [field: string]: unknown;
}

/**
 * The status fields of a finished volume migration, or undefined when the VMI migrates none.
 * `conditions` is the list the completing step already computed (the hotplug conditions gone).
 */
export function finishedVolumeMigrationStatus(vmi: Vmi, conditions: readonly Condition[]): Record<string, unknown> | undefined {
  const migrated = (vmi.status?.['migratedVolumes'] ?? []) as MigratedVolume[];
  const changing = conditions.some((c) => c.type === VOLUMES_CHANGE);
  if (migrated.length === 0 && !changing) return undefined;
  const out: Record<string, unknown> = { conditions: conditions.filter((c) => c.type !== VOLUMES_CHANGE), migratedVolumes: null };
  const destinations = new Map<string, ClaimInfo>();
  for (const m of migrated) if (m.sourcePVCInfo?.claimName && m.destinationPVCInfo) destinations.set(m.sourcePVCInfo.claimName, m.destinationPVCInfo);
  const volumeStatus = (vmi.status?.['volumeStatus'] ?? []) as VolumeStatusEntry[];
  if (volumeStatus.some((v) => destinations.has(v.persistentVolumeClaimInfo?.claimName ?? ''))) {
    out['volumeStatus'] = volumeStatus.map((v) => {
      const dest = destinations.get(v.persistentVolumeClaimInfo?.claimName ?? '');
      return dest ? { ...v, persistentVolumeClaimInfo: dest } : v;
    });
  }
  return out;
}
