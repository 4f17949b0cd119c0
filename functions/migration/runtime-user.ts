/**
 * The VMI's runtime user as KubeVirt's migration controller settles it before it renders a target
 * pod: on a cluster without the `Root` gate the VMI is made non-root (`status.runtimeUser: 107`,
 * and the `kubevirt.io/nonroot: "true"` annotation KubeVirt still writes for launchers from
 * before v0.52), with the gate root (0,
 * the annotation removed). The target pod is then rendered from that VMI, so a VMI that started as
 * root migrates to a non-root launcher (and back). Pure: the JSON patch, or none.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NON_ROOT_UID, NONROOT_ANNOTATION } from '../../shared/api/well-known.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';

const ROOT_UID = 0;

/** `~` and `/` escaped for a JSON pointer token. */
const token = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** The patch that settles `vmi`'s runtime user for a cluster with (`rootEnabled`) or without the Root gate; empty when it is settled. */
export function runtimeUserPatch(vmi: VirtualMachineInstance, rootEnabled: boolean): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const annotations = vmi.metadata?.annotations;
  if (!rootEnabled) {
    // `replace` even when the field is missing: kube-apiserver's JSON patch sets a missing key.
    if (vmi.status?.runtimeUser !== NON_ROOT_UID) ops.push({ op: 'replace', path: '/status/runtimeUser', value: NON_ROOT_UID });
    if (!annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: { [NONROOT_ANNOTATION]: 'true' } });
    else if (!(NONROOT_ANNOTATION in annotations)) ops.push({ op: 'add', path: `/metadata/annotations/${token(NONROOT_ANNOTATION)}`, value: 'true' });
  } else {
    if (vmi.status?.runtimeUser !== ROOT_UID) ops.push({ op: 'replace', path: '/status/runtimeUser', value: ROOT_UID });
    if (annotations && NONROOT_ANNOTATION in annotations) ops.push({ op: 'remove', path: `/metadata/annotations/${token(NONROOT_ANNOTATION)}` });
  }
  return ops;
}

/** `vmi` as the patch leaves it (for rendering without reading it back). */
export function withRuntimeUser(vmi: VirtualMachineInstance, rootEnabled: boolean): VirtualMachineInstance {
  const annotations = { ...vmi.metadata?.annotations };
  if (rootEnabled) delete annotations[NONROOT_ANNOTATION];
  else annotations[NONROOT_ANNOTATION] ??= 'true';
  return { ...vmi, metadata: { ...vmi.metadata, annotations }, status: { ...vmi.status, runtimeUser: rootEnabled ? ROOT_UID : NON_ROOT_UID } };
}
