/** The claims (`namespace/name` of a PVC or DataVolume) a VMI or VM uses, as the relay indexes them. */

interface VolumeLike {
  persistentVolumeClaim?: { claimName?: string };
  dataVolume?: { name?: string };
}

/** The PVCs and DataVolumes of `volumes` (a VMI spec's, or a VM template's). */
export function claimsOf(ns: string, volumes: unknown): string[] {
  if (!Array.isArray(volumes)) return [];
  const out: string[] = [];
  for (const v of volumes as VolumeLike[]) {
    if (v.persistentVolumeClaim?.claimName) out.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    if (v.dataVolume?.name) out.push(`${ns}/${v.dataVolume.name}`);
  }
  return out;
}

/** A VM's claims: its template's volumes and its DataVolume templates. */
export function vmClaims(ns: string, spec: Record<string, unknown> | undefined): string[] {
  const template = spec?.template as { spec?: { volumes?: unknown } } | undefined;
  const dvts = Array.isArray(spec?.dataVolumeTemplates) ? (spec.dataVolumeTemplates as { metadata?: { name?: string } }[]) : [];
  return [...claimsOf(ns, template?.spec?.volumes), ...dvts.flatMap((d) => (d.metadata?.name ? [`${ns}/${d.metadata.name}`] : []))];
}
