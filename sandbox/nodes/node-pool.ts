/**
 * The sandbox's Node objects: node01..nodeN, shaped like KubeVirt nodes after virt-handler's node
 * labeller and heartbeat have run, so launcher and migration target pods (reference §b.2, §b.8)
 * can schedule: capacity and allocatable per resource (the device plugins' 1000 kvm, tun and
 * vhost-net devices), `kubernetes.io/hostname`, `kubevirt.io/schedulable`, the CPU manager labels,
 * CPU model, feature, TSC and hyperv labels. A {@link NodeShape} (for all nodes, or per node) can
 * take a resource away, mark a plugin's devices unhealthy, add hugepages or GPUs, turn the CPU
 * manager on or drop a label — what a real node lacking kvm or hugepages looks like.
 */
import { MERGE_PATCH, statusCodeOf, type NodeSideApi } from './api.ts';
import type { Node, StringMap } from './objects.ts';

/** Shape of each simulated node. */
export interface NodeShape {
  cpu: string;
  memory: string;
  pods: string;
  /** Host CPU model the node labeller would report (host-model). */
  cpuModel: string;
  /** Features the host model requires (→ host-model-required-features / cpu-feature labels). */
  cpuFeatures: string[];
  /**
   * Capacity to add or change (`{ 'hugepages-2Mi': '1Gi', 'nvidia.com/GA102': '2' }`), or remove
   * (`null`: the resource is unknown to the node — no device plugin registered it).
   */
  resources?: Record<string, string | null>;
  /**
   * Device-plugin resources whose devices are all unhealthy (their `/dev` node is missing): the
   * plugin is registered (capacity keeps its count) but allocatable is 0.
   */
  unhealthyDevices?: string[];
  /** The kubelet runs the static CPU manager and KubeVirt's CPUManager gate is on (`kubevirt.io/cpumanager=true`). */
  cpuManager?: boolean;
  /** Labels to add or change, or remove (`null`), after the defaults (e.g. `kubernetes.io/hostname: null`). */
  labels?: Record<string, string | null>;
  /**
   * The SELinux context this node's virt-handler reports for its VMIs (`status.selinuxContext`):
   * unset, `none` (a node without SELinux); a context such as
   * `system_u:system_r:container_t:s0:c1,c2` (an SELinux node); `''`, never written (reference-node-side
   * §5.20). Carried to the simulated handler as the node annotation {@link SELINUX_CONTEXT_ANNOTATION}.
   */
  selinuxContext?: string;
}

/** The sandbox's node annotation telling its simulated virt-handler what SELinux context to report. */
export const SELINUX_CONTEXT_ANNOTATION = 'sandbox.virt-reconciler.io/selinux-context';

export const DEFAULT_NODE_SHAPE: NodeShape = {
  cpu: '16',
  memory: '64Gi',
  pods: '110',
  cpuModel: 'Skylake-Client-IBRS',
  cpuFeatures: ['vmx', 'invtsc', 'pcid'],
};

/** `node01`, `node02`, … (two digits, like kubevirtci). */
export function nodeName(index: number): string {
  return `node${String(index).padStart(2, '0')}`;
}

/** Internal IP of node `index` (1-based), as in kubevirtci. */
export function nodeIp(index: number): string {
  return `192.168.66.${100 + index}`;
}

/** Labels the node labeller and kubelet put on a KubeVirt node. */
export function nodeLabels(name: string, shape: NodeShape): StringMap {
  const labels: StringMap = {
    'kubernetes.io/hostname': name,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubevirt.io/schedulable': 'true',
    'machine-type.node.kubevirt.io/q35': 'true',
    'machine-type.node.kubevirt.io/pc-q35-rhel9.6.0': 'true',
    [`cpu-model.node.kubevirt.io/${shape.cpuModel}`]: 'true',
    [`cpu-model-migration.node.kubevirt.io/${shape.cpuModel}`]: 'true',
    [`host-model-cpu.node.kubevirt.io/${shape.cpuModel}`]: 'true',
    'cpu-vendor.node.kubevirt.io/Intel': 'true',
    'cpu-timer.node.kubevirt.io/tsc-frequency': '2400000000',
    'cpu-timer.node.kubevirt.io/tsc-scalable': 'true',
    // No `scheduling.node.kubevirt.io/tsc-frequency-<Hz>`: virt-controller's topology updater (our
    // node controller) writes those, not virt-handler.
    'kubevirt.io/ksm-enabled': 'false',
  };
  for (const f of shape.cpuFeatures) {
    labels[`cpu-feature.node.kubevirt.io/${f}`] = 'true';
    labels[`host-model-required-features.node.kubevirt.io/${f}`] = 'true';
  }
  for (const f of ['vpindex', 'runtime', 'reset', 'synic', 'synictimer', 'frequencies', 'reenlightenment', 'tlbflush', 'ipi']) {
    labels[`hyperv.node.kubevirt.io/${f}`] = 'true';
  }
  // virt-handler's heartbeat writes both CPU manager labels, true only with the static policy.
  labels['cpumanager'] = String(shape.cpuManager === true);
  labels['kubevirt.io/cpumanager'] = String(shape.cpuManager === true);
  for (const [k, v] of Object.entries(shape.labels ?? {})) {
    if (v === null) delete labels[k];
    else labels[k] = v;
  }
  return labels;
}

/** The full Node object for node `index` (1-based). */
export function buildNode(index: number, shape: NodeShape, nowIso: string): Node & { status: object } {
  const name = nodeName(index);
  const resources: StringMap = {
    cpu: shape.cpu,
    memory: shape.memory,
    pods: shape.pods,
    'ephemeral-storage': '100Gi',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    'devices.kubevirt.io/kvm': '1k',
    'devices.kubevirt.io/tun': '1k',
    'devices.kubevirt.io/vhost-net': '1k',
    'devices.kubevirt.io/sev': '0',
  };
  for (const [k, v] of Object.entries(shape.resources ?? {})) {
    if (v === null) delete resources[k];
    else resources[k] = v;
  }
  const allocatable: StringMap = { ...resources };
  for (const r of shape.unhealthyDevices ?? []) if (r in allocatable) allocatable[r] = '0';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: nodeLabels(name, shape),
      annotations: { 'kubevirt.io/heartbeat': nowIso, 'node.alpha.kubernetes.io/ttl': '0', ...(shape.selinuxContext !== undefined && { [SELINUX_CONTEXT_ANNOTATION]: shape.selinuxContext }) },
    },
    spec: { podCIDR: `10.244.${index}.0/24` } as Node['spec'],
    status: nodeStatus(index, resources, allocatable, nowIso),
  };
}

function nodeStatus(index: number, resources: StringMap, allocatable: StringMap, nowIso: string) {
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: nowIso,
    lastTransitionTime: nowIso,
  });
  return {
    capacity: resources,
    allocatable,
    addresses: [
      { type: 'InternalIP', address: nodeIp(index) },
      { type: 'Hostname', address: nodeName(index) },
    ],
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      architecture: 'amd64',
      operatingSystem: 'linux',
      kubeletVersion: 'v1.34.0-sandbox',
      containerRuntimeVersion: 'sandbox://1.0',
      kernelVersion: '6.12.0',
      osImage: 'virt-reconciler sandbox',
      machineID: `sandbox-${nodeName(index)}`,
      systemUUID: `00000000-0000-0000-0000-0000000000${String(index).padStart(2, '0')}`,
      bootID: `sandbox-boot-${index}`,
      kubeProxyVersion: '',
    },
  };
}

/**
 * Creates node01..nodeN (an existing node is left as it is) and makes sure each carries its
 * status: the server may drop `status` on create, as it does for objects with a status
 * subresource. Returns the node names.
 */
export async function createNodes(api: NodeSideApi, count: number, nowIso: string, shape = DEFAULT_NODE_SHAPE, perNode: Record<string, Partial<NodeShape>> = {}): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const node = buildNode(i, { ...shape, ...perNode[nodeName(i)] }, nowIso);
    names.push(nodeName(i));
    try {
      await api.core.createNode({ body: node as never });
    } catch (err) {
      if (statusCodeOf(err) === 409) continue;
      throw err;
    }
    await api.core.patchNodeStatus({ name: nodeName(i), body: { status: node.status } }, MERGE_PATCH);
  }
  return names;
}
