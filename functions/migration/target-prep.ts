/**
 * Two things KubeVirt's migration controller does around the target pod, pure:
 * - `setupVMIRuntimeUser`: before the target pod is created the VMI is patched to the runtime user
 *   the cluster runs launchers as now — non-root (107, and the deprecated `kubevirt.io/nonroot`
 *   annotation) unless the `Root` gate is on, root (0, the annotation removed) when it is. A VMI
 *   started under the other setting thus migrates root → non-root or back, and the target pod is
 *   rendered for the new user;
 * - `alertIfHostModelIsUnschedulable`: a host-model VMI whose target pod is unschedulable, when no
 *   node but its own carries the target pod's `cpu-model-migration.node.kubevirt.io/` and
 *   `cpu-feature.node.kubevirt.io/` selector labels with their values, gets a Warning
 *   `NoSuitableNodesForHostModelMigration`.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NON_ROOT_UID, ROOT_UID } from '../../shared/api/well-known.ts';
import { escapeJsonPointer, type JsonPatchOperation } from '../../shared/kube/client.ts';

export const DEPRECATED_NON_ROOT_ANNOTATION = 'kubevirt.io/nonroot';
const HOST_MODEL_MIGRATION_PREFIX = 'cpu-model-migration.node.kubevirt.io/';
const CPU_FEATURE_PREFIX = 'cpu-feature.node.kubevirt.io/';

/** The JSON patch that sets the VMI's runtime user for the cluster's setting (empty when it already matches). */
export function runtimeUserPatch(vmi: VirtualMachineInstance, rootEnabled: boolean): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const annotations = vmi.metadata?.annotations;
  const annotationPath = `/metadata/annotations/${escapeJsonPointer(DEPRECATED_NON_ROOT_ANNOTATION)}`;
  const want = rootEnabled ? ROOT_UID : NON_ROOT_UID;
  // KubeVirt replaces the field (an absent runtimeUser is Go's 0); an absent one is added here:
  // RFC 6902 refuses a `replace` of a missing member (kube-apiserver's json-patch v4 lets it set
  // one, and the result is the same).
  if ((vmi.status?.runtimeUser ?? ROOT_UID) !== want) ops.push({ op: vmi.status?.runtimeUser === undefined ? 'add' : 'replace', path: '/status/runtimeUser', value: want });
  if (!rootEnabled) {
    if (annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: { [DEPRECATED_NON_ROOT_ANNOTATION]: 'true' } });
    else if (!(DEPRECATED_NON_ROOT_ANNOTATION in annotations)) ops.push({ op: 'add', path: annotationPath, value: 'true' });
  } else if (annotations && DEPRECATED_NON_ROOT_ANNOTATION in annotations) {
    ops.push({ op: 'remove', path: annotationPath });
  }
  return ops;
}

/** The labels a host-model target must carry (from its pod's node selector), or undefined when the VMI is not host-model. */
export function hostModelRequirements(vmi: VirtualMachineInstance, targetPod: V1Pod): Record<string, string> | undefined {
  if (vmi.spec.domain.cpu?.model !== 'host-model') return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(targetPod.spec?.nodeSelector ?? {})) {
    if (k.startsWith(HOST_MODEL_MIGRATION_PREFIX) || k.startsWith(CPU_FEATURE_PREFIX)) out[k] = v;
  }
  return out;
}

/** The Warning's message when no node other than the VMI's fits, else undefined. */
export function noSuitableHostModelNode(vmi: VirtualMachineInstance, required: Record<string, string>, nodes: readonly V1Node[]): string | undefined {
  const fits = nodes.some((n) => n.metadata?.name !== vmi.status?.nodeName && Object.entries(required).every(([k, v]) => n.metadata?.labels?.[k] === v));
  if (fits) return undefined;
  // Go's %v of a map: map[k1:v1 k2:v2], keys sorted.
  const shown = Object.keys(required).sort().map((k) => `${k}:${required[k]}`).join(' ');
  return `Migration cannot proceed since no node is suitable to run the required CPU model / required features: map[${shown}]`;
}
