/**
 * The live lane's scenarios: the same inputs, in the same order, for KubeVirt's virt-controller
 * and for ours, each in a namespace of its own (`live-<scenario>`). A step writes something and
 * waits for what any correct controller must reach (a VMI Running, a migration Succeeded, a
 * restore Complete); what the controller leaves on the way is then compared, not asserted here.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, NETWORK_ATTACHMENT_DEFINITIONS, NODES, PODS, PVCS, VM_CLONES, VM_EXPORTS, VM_POOLS, VM_RESTORES, VM_SNAPSHOTS, VMI_REPLICA_SETS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { IMMEDIATE_CLASS } from '../../../sandbox/storage/classes.ts';

/** What a step may reach besides the API server: the sandbox's virt-api (its subresources). */
export interface StepContext {
  readonly virtApiUrl?: string;
}

/** One write and what must follow it. */
export interface Step {
  readonly what: string;
  run(kube: KubeClient, ns: string, ctx: StepContext): Promise<void>;
  /** What the step waits for (at most the lane's step timeout); none: the next step follows at once. */
  until?(kube: KubeClient, ns: string): Promise<boolean>;
}

export interface Scenario {
  readonly name: string;
  readonly steps: readonly Step[];
}

const VMI_SPEC = {
  domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {} }] } },
  networks: [{ name: 'default', pod: {} }],
  volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0' } }],
  terminationGracePeriodSeconds: 0,
};

function vmi(ns: string, name: string, extra: Record<string, unknown> = {}): VirtualMachineInstance {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: ns }, spec: { ...VMI_SPEC, ...extra } } as VirtualMachineInstance;
}

function vm(ns: string, name: string, spec: Record<string, unknown>, template: Record<string, unknown> = {}): VirtualMachine {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: ns }, spec: { template: { metadata: { labels: { 'kubevirt.io/vm': name } }, spec: { ...VMI_SPEC, ...template } }, ...spec } } as VirtualMachine;
}

const phaseOf = async (k: KubeClient, ns: string, name: string) => (await k.get(VMIS, ns, name))?.status?.phase;
const running = (name: string) => async (k: KubeClient, ns: string) => (await phaseOf(k, ns, name)) === 'Running';
const gone = (name: string) => async (k: KubeClient, ns: string) => (await k.get(VMIS, ns, name)) === undefined;
const runningCount = async (k: KubeClient, ns: string) => (await k.list(VMIS, ns)).items.filter((v) => v.status?.phase === 'Running').length;

/** A claim of the sandbox's Immediate class, and a stopped VM with it as a second disk. */
function vmWithClaim(ns: string, name: string): Step {
  return {
    what: `a claim ${name}-data and a stopped VM ${name} using it`,
    async run(k) {
      await k.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-data`, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } });
      const v = vm(ns, name, { runStrategy: 'Halted' }, {
        domain: { ...VMI_SPEC.domain, devices: { ...VMI_SPEC.domain.devices, disks: [...VMI_SPEC.domain.devices.disks, { name: 'data', disk: { bus: 'virtio' } }] } },
        volumes: [...VMI_SPEC.volumes, { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }],
      });
      await k.create(VMS, v);
    },
    // And the VM says whether its volumes can be snapshotted: a clone or snapshot started before
    // that would see a race, not the controller (both wait for it; which pass sees it is timing).
    until: async (k) => {
      if ((await k.get(PVCS, ns, `${name}-data`))?.status?.phase !== 'Bound') return false;
      const status = (await k.get(VMS, ns, name))?.status;
      return status?.printableStatus === 'Stopped' && (status.volumeSnapshotStatuses ?? []).some((v) => v.name === 'data');
    },
  };
}

/** The UID of the VMI a restart step deleted, by namespace: the restarted one has another. */
const restarted = new Map<string, string>();

/** A user's `virtctl pause|unpause vmi <name>`: virt-api's subresource (the sandbox's, sandbox/virt-api/vmi-pause.ts). */
const vmiSubresource = (name: string, verb: 'pause' | 'unpause') => async (_k: KubeClient, ns: string, ctx: StepContext) => {
  if (!ctx.virtApiUrl) throw new Error('no virt-api in this sandbox');
  const res = await fetch(`${ctx.virtApiUrl}/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/${name}/${verb}`, { method: 'PUT', body: '{}' });
  if (!res.ok) throw new Error(`${verb} ${ns}/${name}: ${res.status} ${await res.text()}`);
};

const vmPrintable = async (k: KubeClient, ns: string, name: string) => (await k.get(VMS, ns, name))?.status?.printableStatus;

const readyOf = async (k: KubeClient, ns: string, name: string) => (await k.get(VMIS, ns, name))?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const startedVm = (name: string): Step => ({ what: 'a VM Always, its VMI Running', run: (k, ns) => k.create(VMS, vm(ns, name, { runStrategy: 'Always' })).then(() => undefined), until: async (k, ns) => (await running(name)(k, ns)) && (await vmPrintable(k, ns, name)) === 'Running' });
const pausedStep = (name: string): Step => ({ what: 'paused by the user: the VM Paused, the VMI not Ready', run: vmiSubresource(name, 'pause'), until: async (k, ns) => (await vmPrintable(k, ns, name)) === 'Paused' && (await readyOf(k, ns, name)) === 'False' });
const unpausedStep = (name: string): Step => ({ what: 'unpaused: the VM Running, the VMI Ready', run: vmiSubresource(name, 'unpause'), until: async (k, ns) => (await vmPrintable(k, ns, name)) === 'Running' && (await readyOf(k, ns, name)) === 'True' });

const setRunStrategy = (name: string, runStrategy: string) => (k: KubeClient, ns: string) => k.patch(VMS, ns, name, { type: 'merge', body: { spec: { runStrategy } } }).then(() => undefined);

/** Every scenario, in the order they run. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'vmi-lifecycle',
    steps: [
      { what: 'a VMI created, Running', run: (k, ns) => k.create(VMIS, vmi(ns, 'life')).then(() => undefined), until: running('life') },
    ],
  },
  {
    name: 'vm-run-strategies',
    steps: [
      { what: 'a VM Always, its VMI Running', run: (k, ns) => k.create(VMS, vm(ns, 'rs', { runStrategy: 'Always' })).then(() => undefined), until: running('rs') },
      { what: 'Halted: the VMI gone', run: setRunStrategy('rs', 'Halted'), until: async (k, ns) => (await gone('rs')(k, ns)) && (await k.get(VMS, ns, 'rs'))?.status?.printableStatus === 'Stopped' },
      { what: 'Always again: Running', run: setRunStrategy('rs', 'Always'), until: running('rs') },
      {
        what: 'the VMI deleted: the VM starts a new one',
        async run(k, ns) {
          restarted.set(ns, (await k.get(VMIS, ns, 'rs'))?.metadata?.uid ?? '');
          await k.delete(VMIS, ns, 'rs');
        },
        until: async (k, ns) => {
          const v = await k.get(VMIS, ns, 'rs');
          return v?.metadata?.uid !== restarted.get(ns) && v?.status?.phase === 'Running' && (await k.get(VMS, ns, 'rs'))?.status?.printableStatus === 'Running';
        },
      },
    ],
  },
  // Compared where each ends: paused (the launcher pod's readiness gate, the VMI not Ready, the VM
  // Paused), and paused then unpaused.
  { name: 'paused', steps: [startedVm('pz'), pausedStep('pz')] },
  { name: 'unpaused', steps: [startedVm('upz'), pausedStep('upz'), unpausedStep('upz')] },
  {
    name: 'live-migration',
    steps: [
      { what: 'a VMI Running', run: (k, ns) => k.create(VMIS, vmi(ns, 'mig')).then(() => undefined), until: running('mig') },
      {
        what: 'a migration Succeeded',
        run: (k, ns) => k.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-1', namespace: ns }, spec: { vmiName: 'mig' } } as never).then(() => undefined),
        until: async (k, ns) => (await k.get(MIGRATIONS, ns, 'mig-1'))?.status?.phase === 'Succeeded',
      },
    ],
  },
  {
    name: 'drain',
    steps: [
      { what: 'a VMI with evictionStrategy LiveMigrate Running', run: (k, ns) => k.create(VMIS, vmi(ns, 'drn', { evictionStrategy: 'LiveMigrate' })).then(() => undefined), until: running('drn') },
      {
        what: "its node tainted kubevirt.io/drain: the VMI migrated away",
        async run(k, ns) {
          const node = (await k.get(VMIS, ns, 'drn'))?.status?.nodeName ?? '';
          const n = await k.get(NODES, undefined, node);
          await k.patch(NODES, undefined, node, { type: 'merge', body: { spec: { taints: [...(n?.spec?.taints ?? []), { key: 'kubevirt.io/drain', effect: 'NoSchedule' }] } } });
        },
        until: async (k, ns) => {
          const v = await k.get(VMIS, ns, 'drn');
          return v?.status?.migrationState?.completed === true && v.status.phase === 'Running';
        },
      },
      {
        what: 'the taint removed',
        async run(k) {
          for (const n of (await k.list(NODES, undefined)).items) {
            const taints = (n.spec?.taints ?? []).filter((t) => t.key !== 'kubevirt.io/drain');
            if (taints.length !== (n.spec?.taints ?? []).length) await k.patch(NODES, undefined, n.metadata!.name!, { type: 'merge', body: { spec: { taints } } });
          }
        },
      },
    ],
  },
  {
    name: 'replica-set',
    steps: [
      {
        what: 'a replica set of 2, both Running',
        run: (k, ns) => k.create(VMI_REPLICA_SETS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: { name: 'rs', namespace: ns }, spec: { replicas: 2, selector: { matchLabels: { app: 'rs' } }, template: { metadata: { labels: { app: 'rs' } }, spec: VMI_SPEC } } } as never).then(() => undefined),
        until: async (k, ns) => (await runningCount(k, ns)) === 2 && (await k.get(VMI_REPLICA_SETS, ns, 'rs'))?.status?.readyReplicas === 2,
      },
      {
        what: 'scaled to 3, three Running',
        run: (k, ns) => k.patch(VMI_REPLICA_SETS, ns, 'rs', { type: 'merge', body: { spec: { replicas: 3 } } }).then(() => undefined),
        until: async (k, ns) => (await runningCount(k, ns)) === 3 && (await k.get(VMI_REPLICA_SETS, ns, 'rs'))?.status?.readyReplicas === 3,
      },
    ],
  },
  {
    name: 'pool',
    steps: [
      {
        what: 'a pool of 2 VMs, both Running',
        run: (k, ns) =>
          k.create(VM_POOLS, { apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', metadata: { name: 'pool', namespace: ns }, spec: { replicas: 2, selector: { matchLabels: { app: 'pool' } }, virtualMachineTemplate: { metadata: { labels: { app: 'pool' } }, spec: { runStrategy: 'Always', template: { metadata: { labels: { app: 'pool' } }, spec: VMI_SPEC } } } } } as never).then(() => undefined),
        until: async (k, ns) => (await runningCount(k, ns)) === 2 && (await k.get(VM_POOLS, ns, 'pool'))?.status?.readyReplicas === 2,
      },
    ],
  },
  {
    name: 'snapshot-restore',
    steps: [
      vmWithClaim('live-snapshot-restore', 'snap'),
      {
        what: 'a snapshot, ready to use',
        run: (k, ns) => k.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'snap-1', namespace: ns }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'snap' } } } as never).then(() => undefined),
        until: async (k, ns) => (await k.get(VM_SNAPSHOTS, ns, 'snap-1'))?.status?.readyToUse === true,
      },
      {
        what: 'restored from it: Complete',
        run: (k, ns) => k.create(VM_RESTORES, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineRestore', metadata: { name: 'restore-1', namespace: ns }, spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'snap' }, virtualMachineSnapshotName: 'snap-1' } } as never).then(() => undefined),
        until: async (k, ns) => (await k.get(VM_RESTORES, ns, 'restore-1'))?.status?.complete === true,
      },
    ],
  },
  {
    name: 'clone',
    steps: [
      vmWithClaim('live-clone', 'src'),
      {
        what: 'a clone into a new VM: Succeeded',
        run: (k, ns) => k.create(VM_CLONES, { apiVersion: 'clone.kubevirt.io/v1beta1', kind: 'VirtualMachineClone', metadata: { name: 'clone-1', namespace: ns }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src' }, target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'dst' }, newMacAddresses: { default: '02:00:00:bb:bb:bb' } } } as never).then(() => undefined),
        until: async (k, ns) => (await k.get(VM_CLONES, ns, 'clone-1'))?.status?.phase === 'Succeeded',
      },
    ],
  },
  {
    name: 'export',
    steps: [
      vmWithClaim('live-export', 'exp'),
      {
        what: "an export of the stopped VM's volumes: Ready",
        run: (k, ns) => k.create(VM_EXPORTS, { apiVersion: 'export.kubevirt.io/v1', kind: 'VirtualMachineExport', metadata: { name: 'export-1', namespace: ns }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'exp' } } } as never).then(() => undefined),
        until: async (k, ns) => (await k.get(VM_EXPORTS, ns, 'export-1'))?.status?.phase === 'Ready',
      },
    ],
  },
  {
    // A VM whose disk is a DataVolume template (CDI's blank import on the sandbox): the VM's and
    // the VMI's DataVolumesReady conditions, the VM waiting for the import before it starts.
    name: 'datavolume-vm',
    steps: [
      {
        what: 'a VM Always with a DataVolume template: the DataVolume Succeeded, the VMI Running',
        run: (k, ns) =>
          k.create(VMS, vm(ns, 'dv', {
            runStrategy: 'Always',
            dataVolumeTemplates: [{ metadata: { name: 'dv-disk' }, spec: { source: { blank: {} }, storage: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } } }],
          }, {
            domain: { ...VMI_SPEC.domain, devices: { ...VMI_SPEC.domain.devices, disks: [...VMI_SPEC.domain.devices.disks, { name: 'data', disk: { bus: 'virtio' } }] } },
            volumes: [...VMI_SPEC.volumes, { name: 'data', dataVolume: { name: 'dv-disk' } }],
          })).then(() => undefined),
        until: async (k, ns) => (await running('dv')(k, ns)) && (await k.get(VMS, ns, 'dv'))?.status?.printableStatus === 'Running',
      },
      { what: 'Halted: the VMI gone, the DataVolume kept', run: setRunStrategy('dv', 'Halted'), until: async (k, ns) => (await gone('dv')(k, ns)) && (await k.get(VMS, ns, 'dv'))?.status?.printableStatus === 'Stopped' },
    ],
  },
  {
    // Declarative hotplug: the user edits the running VM's template; the VM controller carries the
    // volume to the VMI, the VMI controller makes the attachment pod, virt-handler attaches it.
    name: 'hotplug',
    steps: [
      {
        what: 'a claim, and a VM Always Running',
        async run(k, ns) {
          await k.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'hp-data', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } });
          await k.create(VMS, vm(ns, 'hp', { runStrategy: 'Always' }));
        },
        until: async (k, ns) => (await running('hp')(k, ns)) && (await k.get(PVCS, ns, 'hp-data'))?.status?.phase === 'Bound',
      },
      {
        what: 'a hotpluggable volume added to its template: the attachment pod, the volume Ready on the VMI',
        run: (k, ns) =>
          k.patch(VMS, ns, 'hp', {
            type: 'json',
            ops: [
              { op: 'add', path: '/spec/template/spec/volumes/-', value: { name: 'hp-disk', persistentVolumeClaim: { claimName: 'hp-data', hotpluggable: true } } },
              { op: 'add', path: '/spec/template/spec/domain/devices/disks/-', value: { name: 'hp-disk', disk: { bus: 'scsi' } } },
            ],
          }).then(() => undefined),
        until: async (k, ns) => ((await k.get(VMIS, ns, 'hp'))?.status?.volumeStatus ?? []).some((v) => v.name === 'hp-disk' && v.phase === 'Ready'),
      },
    ],
  },
  // Last: it turns a gate of the cluster's KubeVirt CR off, which every later scenario would see.
  {
    name: 'nad-resource',
    steps: [
      {
        what: 'ExternalNetResourceInjection off in the KubeVirt CR; a NetworkAttachmentDefinition naming a device-plugin resource',
        async run(k, ns) {
          const kv = (await k.list(KUBEVIRTS, undefined)).items[0]!;
          await k.patch(KUBEVIRTS, kv.metadata?.namespace ?? 'kubevirt', kv.metadata?.name ?? 'kubevirt', { type: 'merge', body: { spec: { configuration: { developerConfiguration: { disabledFeatureGates: ['ExternalNetResourceInjection'] } } } } });
          await k.create(NETWORK_ATTACHMENT_DEFINITIONS, { apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: 'sriov-net', namespace: ns, annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_netdevice' } }, spec: { config: '{"cniVersion":"0.3.1","name":"sriov-net","type":"bridge"}' } });
        },
      },
      {
        what: 'a VMI on that network: its launcher pod requests the resource (no node has it: Pending)',
        async run(k, ns) {
          // The gate reaches KubeVirt's controller through its informer at once, ours within its
          // cluster-config cache's 5 s (shared/config/cluster-config-cache.ts): the render is compared, not that latency.
          await new Promise((r) => setTimeout(r, 6000));
          await k.create(VMIS, vmi(ns, 'nad', {
            domain: { ...VMI_SPEC.domain, devices: { ...VMI_SPEC.domain.devices, interfaces: [...VMI_SPEC.domain.devices.interfaces, { name: 'sriov', bridge: {} }] } },
            networks: [...VMI_SPEC.networks, { name: 'sriov', multus: { networkName: 'sriov-net' } }],
          }));
        },
        until: async (k, ns) => (await k.list(PODS, ns)).items.some((p) => p.spec?.containers.some((c) => c.resources?.requests?.['intel.com/sriov_netdevice'] !== undefined)),
      },
    ],
  },
];

/** The namespace a scenario runs in. */
export function namespaceOf(s: Scenario): string {
  return `live-${s.name}`;
}
