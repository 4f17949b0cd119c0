/**
 * Names KubeVirt's instance types and preferences use (`staging/src/kubevirt.io/api/instancetype`,
 * `core/v1` annotations), spelled as KubeVirt spells them (reference-vm-vmi-depth.md §1).
 */

/** The API version every stored revision is written in (and upgraded to). */
export const INSTANCETYPE_API_VERSION = 'instancetype.kubevirt.io/v1beta1';
/** The version part of it, as it appears in revision names and the object-version label. */
export const INSTANCETYPE_VERSION = 'v1beta1';

export const KIND_INSTANCETYPE = 'VirtualMachineInstancetype';
export const KIND_CLUSTER_INSTANCETYPE = 'VirtualMachineClusterInstancetype';
export const KIND_PREFERENCE = 'VirtualMachinePreference';
export const KIND_CLUSTER_PREFERENCE = 'VirtualMachineClusterPreference';

/** ControllerRevision labels describing the object a revision stores. */
export const OBJECT_GENERATION_LABEL = 'instancetype.kubevirt.io/object-generation';
export const OBJECT_KIND_LABEL = 'instancetype.kubevirt.io/object-kind';
export const OBJECT_NAME_LABEL = 'instancetype.kubevirt.io/object-name';
export const OBJECT_UID_LABEL = 'instancetype.kubevirt.io/object-uid';
export const OBJECT_VERSION_LABEL = 'instancetype.kubevirt.io/object-version';

/** Volume labels naming the default instance type / preference (`inferFromVolume`). */
export const DEFAULT_INSTANCETYPE_LABEL = 'instancetype.kubevirt.io/default-instancetype';
export const DEFAULT_INSTANCETYPE_KIND_LABEL = 'instancetype.kubevirt.io/default-instancetype-kind';
export const DEFAULT_PREFERENCE_LABEL = 'instancetype.kubevirt.io/default-preference';
export const DEFAULT_PREFERENCE_KIND_LABEL = 'instancetype.kubevirt.io/default-preference-kind';

/** VMI annotations naming what the VMI was expanded from. */
export const INSTANCETYPE_ANNOTATION = 'kubevirt.io/instancetype-name';
export const CLUSTER_INSTANCETYPE_ANNOTATION = 'kubevirt.io/cluster-instancetype-name';
export const PREFERENCE_ANNOTATION = 'kubevirt.io/preference-name';
export const CLUSTER_PREFERENCE_ANNOTATION = 'kubevirt.io/cluster-preference-name';

/** `inferFromVolumeFailurePolicy` values. */
export const IGNORE_INFER_FAILURE = 'IgnoreInferFromVolumeFailure';
export const REJECT_INFER_FAILURE = 'RejectInferFromVolumeFailure';

/** `spec.configuration.instancetype.referencePolicy` values (default `reference`). */
export const REFERENCE_POLICY = { reference: 'reference', expand: 'expand', expandAll: 'expandAll' } as const;
