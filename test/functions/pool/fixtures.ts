/** Pools, VMs and VMIs for the pool controller's tests. */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePool, VirtualMachinePoolSpec } from '../../../shared/api/index.ts';
import { REVISION_LABEL } from '../../../functions/pool/well-known.ts';

export const NS = 'default';

/** A pool `name` of `replicas` container-disk VMs (runStrategy Always), labels `app: <name>`. */
export function poolManifest(name: string, spec: Partial<VirtualMachinePoolSpec> = {}): VirtualMachinePool {
  return {
    apiVersion: 'pool.kubevirt.io/v1beta1',
    kind: 'VirtualMachinePool',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      virtualMachineTemplate: {
        metadata: { labels: { app: name } },
        spec: {
          runStrategy: 'Always',
          template: {
            metadata: { labels: { app: name } },
            spec: {
              domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
              volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }],
            },
          },
        },
      },
      ...spec,
    },
  };
}

/** A VM of a pool (by name and uid) at `revision`, with optional status and metadata. */
export function poolVm(name: string, opts: { poolUid?: string; revision?: string; ready?: boolean; deleting?: boolean; created?: string; templateLabels?: Record<string, string>; nodeSelector?: Record<string, string> } = {}): VirtualMachine {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      ...(opts.created ? { creationTimestamp: opts.created } : {}),
      ...(opts.deleting ? { deletionTimestamp: '2026-03-01T12:00:00Z' } : {}),
      labels: opts.revision ? { [REVISION_LABEL]: opts.revision } : {},
      ownerReferences: [{ apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', name: 'p', uid: opts.poolUid ?? 'pool-uid', controller: true }],
    },
    spec: {
      template: {
        metadata: { labels: { ...opts.templateLabels, ...(opts.revision ? { [REVISION_LABEL]: opts.revision } : {}) } },
        spec: { domain: { devices: {} }, ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}) },
      },
    },
    ...(opts.ready !== undefined ? { status: { conditions: [{ type: 'Ready', status: opts.ready ? 'True' : 'False' }] } } : {}),
  };
}

/** A VMI `name` at `revision` in `phase`, Ready or not. */
export function poolVmi(name: string, opts: { revision?: string; phase?: string; ready?: boolean; deleting?: boolean } = {}): VirtualMachineInstance {
  return {
    metadata: { name, namespace: NS, uid: `vmi-${name}`, labels: opts.revision ? { [REVISION_LABEL]: opts.revision } : {}, ...(opts.deleting ? { deletionTimestamp: '2026-03-01T12:00:00Z' } : {}) },
    spec: { domain: { devices: {} } },
    status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: (opts.ready ?? true) ? 'True' : 'False' }] },
  } as VirtualMachineInstance;
}
