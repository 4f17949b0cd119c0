/**
 * The sandbox's Node objects: node01..nodeN, shaped like KubeVirt nodes after virt-handler's node
 * labeller has run, so launcher and migration target pods (reference §b.2, §b.8) can schedule.
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
}

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
    'scheduling.node.kubevirt.io/tsc-frequency-2400000000': 'true',
    'kubevirt.io/ksm-enabled': 'false',
  };
  for (const f of shape.cpuFeatures) {
    labels[`cpu-feature.node.kubevirt.io/${f}`] = 'true';
    labels[`host-model-required-features.node.kubevirt.io/${f}`] = 'true';
  }
  for (const f of ['vpindex', 'runtime', 'reset', 'synic', 'synictimer', 'frequencies', 'reenlightenment', 'tlbflush', 'ipi']) {
    labels[`hyperv.node.kubevirt.io/${f}`] = 'true';
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
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: nodeLabels(name, shape),
      annotations: { 'kubevirt.io/heartbeat': nowIso, 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { podCIDR: `10.244.${index}.0/24` } as Node['spec'],
    status: nodeStatus(index, resources, nowIso),
  };
}

function nodeStatus(index: number, resources: StringMap, nowIso: string) {
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
    allocatable: resources,
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
export async function createNodes(api: NodeSideApi, count: number, nowIso: string, shape = DEFAULT_NODE_SHAPE): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const node = buildNode(i, shape, nowIso);
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
