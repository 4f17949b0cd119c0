/**
 * The ControllerRevisions that pin a VM's instance type and preference (KubeVirt's
 * `revision.CreateControllerRevision` and the upgrade's decode, reference-vm-vmi-depth.md
 * §1.3–§1.4), pure: their name, labels and stored object, and reading one back.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine } from '../api/index.ts';
import { KIND_VM, KUBEVIRT_API_VERSION } from '../api/well-known.ts';
import {
  INSTANCETYPE_API_VERSION,
  INSTANCETYPE_VERSION,
  KIND_CLUSTER_INSTANCETYPE,
  KIND_CLUSTER_PREFERENCE,
  KIND_INSTANCETYPE,
  KIND_PREFERENCE,
  OBJECT_GENERATION_LABEL,
  OBJECT_KIND_LABEL,
  OBJECT_NAME_LABEL,
  OBJECT_UID_LABEL,
  OBJECT_VERSION_LABEL,
} from '../instancetype/well-known.ts';
import type { AnyFlavourObject, Flavour } from './kinds.ts';

/** A ControllerRevision with the name the API needs to create it. */
export type Revision = V1ControllerRevision & { metadata: { name: string } };

/** `<vmName>-<objectName>-v1beta1-<objectUID>-<objectGeneration>`. */
export function revisionName(vmName: string, obj: AnyFlavourObject): string {
  const m = obj.metadata ?? {};
  return `${vmName}-${m.name ?? ''}-${INSTANCETYPE_VERSION}-${m.uid ?? ''}-${m.generation ?? 0}`;
}

/**
 * The revision storing `obj` (whose `kind` is its real kind) for `vm`: controlled by the VM, the
 * object-* labels, and the object itself with its apiVersion/kind filled and its labels,
 * annotations, finalizers, owner references and managed fields stripped.
 */
export function buildRevision(vm: VirtualMachine, obj: AnyFlavourObject, kind: string): Revision {
  const meta = { ...obj.metadata };
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences', 'managedFields']) delete meta[k];
  const vmName = vm.metadata?.name ?? '';
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(vmName, obj),
      namespace: vm.metadata?.namespace ?? '',
      ownerReferences: [{ apiVersion: KUBEVIRT_API_VERSION, kind: KIND_VM, name: vmName, uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
      labels: {
        [OBJECT_GENERATION_LABEL]: String(obj.metadata?.generation ?? 0),
        [OBJECT_KIND_LABEL]: kind,
        [OBJECT_NAME_LABEL]: obj.metadata?.name ?? '',
        [OBJECT_UID_LABEL]: obj.metadata?.uid ?? '',
        [OBJECT_VERSION_LABEL]: INSTANCETYPE_VERSION,
      },
    },
    data: { apiVersion: INSTANCETYPE_API_VERSION, kind, metadata: meta, spec: obj.spec },
    revision: 0,
  };
}

/** What a revision holds, decoded and converted to v1beta1. */
export type Decoded = { readonly ok: true; readonly kind: string; readonly object: AnyFlavourObject } | { readonly ok: false; readonly message: string };

const KINDS: Record<Flavour, readonly string[]> = {
  instancetype: [KIND_INSTANCETYPE, KIND_CLUSTER_INSTANCETYPE],
  preference: [KIND_PREFERENCE, KIND_CLUSTER_PREFERENCE],
};
const OLD_VERSIONS = new Set(['instancetype.kubevirt.io/v1alpha1', 'instancetype.kubevirt.io/v1alpha2', INSTANCETYPE_API_VERSION]);

/**
 * Decodes a revision's `data`. It must hold one of the four kinds in v1alpha1, v1alpha2 or
 * v1beta1 (their spec fields are the ones v1beta1 kept, so conversion is a relabelling). The
 * oldest v1alpha1 revisions stored only `{apiVersion, spec: <base64 JSON>}`; their kind, name,
 * uid and generation come from the revision's labels then.
 */
export function decodeRevision(cr: V1ControllerRevision, flavour: Flavour): Decoded {
  const data = (cr.data ?? {}) as { apiVersion?: string; kind?: string; metadata?: AnyFlavourObject['metadata']; spec?: unknown };
  const labels = cr.metadata?.labels ?? {};
  let kind = data.kind;
  let metadata = data.metadata;
  let spec = data.spec;
  if (typeof spec === 'string') {
    try {
      spec = JSON.parse(Buffer.from(spec, 'base64').toString('utf8'));
    } catch {
      spec = undefined;
    }
    kind ??= labels[OBJECT_KIND_LABEL];
    metadata ??= {
      name: labels[OBJECT_NAME_LABEL],
      uid: labels[OBJECT_UID_LABEL],
      generation: labels[OBJECT_GENERATION_LABEL] !== undefined ? Number(labels[OBJECT_GENERATION_LABEL]) : undefined,
    };
  }
  const wanted = KINDS[flavour];
  if (!kind || !wanted.includes(kind) || !OLD_VERSIONS.has(data.apiVersion ?? '') || typeof spec !== 'object' || spec === null) {
    return { ok: false, message: `unexpected type in ControllerRevision: ${describeType(data)}` };
  }
  return { ok: true, kind, object: { apiVersion: INSTANCETYPE_API_VERSION, kind, metadata: { ...metadata }, spec } as AnyFlavourObject };
}

function describeType(data: { apiVersion?: string; kind?: string }): string {
  return data.kind ? `${data.apiVersion ?? ''}, Kind=${data.kind}` : 'unknown';
}

/** Whether a revision still needs upgrading to v1beta1 (an older version label, or none). */
export function needsUpgrade(cr: V1ControllerRevision): boolean {
  return cr.metadata?.labels?.[OBJECT_VERSION_LABEL] !== INSTANCETYPE_VERSION;
}

/** Two revisions of the same name hold the same thing when their decoded specs are equal. */
export function sameSpec(a: V1ControllerRevision, b: V1ControllerRevision, flavour: Flavour): boolean {
  const x = decodeRevision(a, flavour);
  const y = decodeRevision(b, flavour);
  return x.ok && y.ok && isDeepStrictEqual(x.object.spec, y.object.spec);
}
