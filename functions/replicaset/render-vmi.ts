/**
 * The VMI a replica set creates (reference-replicas-pools-clones.md §1.2, Q-R1): the template's
 * metadata (annotations, finalizers… carried over) without a name, `generateName` = the template's
 * name, else its generateName, else the replica set's name — verbatim, the API server appends the
 * random suffix — its labels, exactly one controller reference, and the template's spec.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { KIND_VMI, KUBEVIRT_API_VERSION } from '../../shared/api/well-known.ts';
import { controllerRef } from '../../shared/predicates/owner-refs.ts';

export const KIND_VMI_REPLICA_SET = 'VirtualMachineInstanceReplicaSet';

export function vmiForReplicaSet(rs: VirtualMachineInstanceReplicaSet): VirtualMachineInstance {
  const template = rs.spec.template;
  const { name: templateName, generateName, ...meta } = template.metadata ?? {};
  return {
    apiVersion: KUBEVIRT_API_VERSION,
    kind: KIND_VMI,
    metadata: {
      ...structuredClone(meta),
      namespace: rs.metadata?.namespace ?? '',
      generateName: templateName || generateName || rs.metadata?.name || '',
      ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
      ownerReferences: [controllerRef(KUBEVIRT_API_VERSION, KIND_VMI_REPLICA_SET, rs)],
    },
    spec: structuredClone(template.spec ?? { domain: { devices: {} } }),
  } as VirtualMachineInstance;
}
