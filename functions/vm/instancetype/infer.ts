/**
 * `inferFromVolume` (KubeVirt's `pkg/instancetype/infer`, reference-vm-vmi-depth.md §1.2): the
 * default instance type or preference a volume's labels name. Upstream the VM mutating webhook
 * does this at admission; here the VM controller plays that webhook (`sync.ts` writes the result
 * into the VM's spec as the webhook would have).
 *
 * Labels are read from the named volume's PVC, or its DataVolume (the DV's labels, then its source
 * PVC or DataSource, a DataSource's own labels first; a missing DV falls back to a PVC of the same
 * name). "Ignorable" failures are the ones `IgnoreInferFromVolumeFailure` forgives.
 */
import type { VirtualMachine } from '../../../shared/api/index.ts';
import { DATA_SOURCES, DATA_VOLUMES, PVCS } from '../../../shared/api/resources.ts';
import type { VmKube } from '../deps.ts';
import { notFoundMessage } from '../../../shared/instancetype/kinds.ts';

/** What the volume named: `{name, kind}` (kind may be empty), or why not. */
export type Inferred =
  | { readonly ok: true; readonly name: string; readonly kind: string }
  | { readonly ok: false; readonly ignorable: boolean; readonly message: string };

const fail = (message: string, ignorable = true): Inferred => ({ ok: false, ignorable, message });

function fromLabels(labels: Record<string, string> | undefined, nameLabel: string, kindLabel: string): Inferred {
  const name = labels?.[nameLabel];
  if (name === undefined) return fail(`unable to find required ${nameLabel} label on the volume`);
  return { ok: true, name, kind: labels?.[kindLabel] ?? '' };
}

/** Infers from `volumeName` of `vm` using the given label pair. */
export async function inferFromVolume(kube: Pick<VmKube, 'get'>, vm: VirtualMachine, volumeName: string, nameLabel: string, kindLabel: string): Promise<Inferred> {
  const ns = vm.metadata?.namespace ?? '';
  const fromPvc = async (name: string, namespace: string): Promise<Inferred> => {
    const pvc = await kube.get(PVCS, namespace, name);
    if (!pvc) return fail(notFoundMessage(PVCS, name), false);
    return fromLabels(pvc.metadata?.labels, nameLabel, kindLabel);
  };
  const fromDvSpec = async (spec: { source?: { pvc?: { name: string; namespace: string } }; sourceRef?: { kind: string; name: string; namespace?: string } } | undefined): Promise<Inferred> => {
    if (spec?.source?.pvc) return fromPvc(spec.source.pvc.name, spec.source.pvc.namespace);
    if (spec?.sourceRef) {
      if (spec.sourceRef.kind !== 'DataSource') return fail(`unable to infer defaults from DataVolumeSourceRef as Kind ${spec.sourceRef.kind} is not supported`);
      const dsNs = spec.sourceRef.namespace ?? ns;
      const ds = await kube.get(DATA_SOURCES, dsNs, spec.sourceRef.name);
      if (!ds) return fail(notFoundMessage(DATA_SOURCES, spec.sourceRef.name), false);
      const own = fromLabels(ds.metadata?.labels, nameLabel, kindLabel);
      if (own.ok) return own;
      if (ds.spec?.source?.pvc) return fromPvc(ds.spec.source.pvc.name, ds.spec.source.pvc.namespace);
      return fail("unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC");
    }
    return fail('unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported');
  };

  const volume = (vm.spec.template.spec?.volumes ?? []).find((v) => v.name === volumeName);
  if (!volume) return fail(`unable to find volume ${volumeName} to infer defaults`, false);
  if (volume.persistentVolumeClaim) return fromPvc(volume.persistentVolumeClaim.claimName, ns);
  if (volume.dataVolume) {
    const dvName = volume.dataVolume.name;
    const template = (vm.spec.dataVolumeTemplates ?? []).find((t) => t.metadata?.name === dvName);
    if (template) return fromDvSpec(template.spec);
    const dv = await kube.get(DATA_VOLUMES, ns, dvName);
    // A garbage-collected DataVolume leaves its PVC of the same name.
    if (!dv) return fromPvc(dvName, ns);
    const own = fromLabels(dv.metadata?.labels, nameLabel, kindLabel);
    if (own.ok) return own;
    return fromDvSpec(dv.spec as Parameters<typeof fromDvSpec>[0]);
  }
  return fail(`unable to infer defaults from volume ${volumeName} as type is not supported`);
}
