/**
 * Name indexing (reference §2.4): each VM of a pool gets its own DataVolumes, and optionally its
 * own ConfigMaps and Secrets, by appending its index to the names in a copy of the template spec.
 * Because the names are index-based and VM names are reused lowest-first, a VM re-created at
 * `<pool>-<i>` finds the DataVolume (and PVC) its predecessor left behind under state preservation.
 */
import type { VirtualMachinePool, VirtualMachineSpec } from '../../shared/api/index.ts';

/** The VM spec of index `index`: a deep copy of the pool's template spec with indexed names. */
export function indexedVmSpec(pool: VirtualMachinePool, index: number): VirtualMachineSpec {
  const spec = structuredClone(pool.spec.virtualMachineTemplate.spec ?? { template: {} }) as VirtualMachineSpec;
  const suffix = `-${index}`;
  const renamed = new Map<string, string>();
  for (const dvt of spec.dataVolumeTemplates ?? []) {
    const original = dvt.metadata?.name;
    if (!original) continue;
    renamed.set(original, original + suffix);
    dvt.metadata = { ...dvt.metadata, name: original + suffix };
  }
  const gen = pool.spec.nameGeneration;
  for (const v of spec.template?.spec?.volumes ?? []) {
    if (v.dataVolume?.name && renamed.has(v.dataVolume.name)) v.dataVolume.name = renamed.get(v.dataVolume.name)!;
    if (v.persistentVolumeClaim?.claimName && renamed.has(v.persistentVolumeClaim.claimName)) v.persistentVolumeClaim.claimName = renamed.get(v.persistentVolumeClaim.claimName)!;
    if (gen?.appendIndexToConfigMapRefs === true && v.configMap?.name) v.configMap.name += suffix;
    if (gen?.appendIndexToSecretRefs === true) {
      if (v.secret?.secretName) v.secret.secretName += suffix;
      for (const ci of [v.cloudInitNoCloud, v.cloudInitConfigDrive]) {
        // KubeVirt's UserDataSecretRef is `secretRef` in JSON.
        if (ci?.secretRef?.name) ci.secretRef.name += suffix;
        if (ci?.networkDataSecretRef?.name) ci.networkDataSecretRef.name += suffix;
      }
    }
  }
  return spec;
}
