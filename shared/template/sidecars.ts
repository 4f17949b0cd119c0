/**
 * Sidecars of the compute container (reference §b.4): the hook sidecars a VMI asks for in its
 * `hooks.kubevirt.io/hookSidecars` annotation, then one per network binding plugin with a
 * sidecar image. Each is a `hook-sidecar-<i>` container talking to the launcher over a socket in
 * the shared `hook-sidecar-sockets` emptyDir; `--hook-sidecars <n>` tells the launcher how many
 * to wait for.
 */
import type { V1Container, V1EnvVar, V1ResourceRequirements, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { HOOK_SIDECARS_ANNOTATION } from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { formatQuantity } from '../api/quantity.ts';
import { needsGuaranteedHelpers, nonRootDropAll, xdgEnv } from './support-containers.ts';
import { isNonRoot } from './vmi-traits.ts';

/** The emptyDir the launcher and its sidecars share their sockets in. */
export const HOOK_SIDECAR_SOCKETS = 'hook-sidecar-sockets';
export const HOOK_SOCKETS_DIR = '/var/run/kubevirt-hooks';
/** Where a device-info binding plugin (and SR-IOV) reads the network-info annotation. */
export const NETWORK_INFO_VOLUME = 'network-info-annotation';
export const NETWORK_INFO_DIR = '/etc/podinfo';

/** One requested sidecar (KubeVirt's `HookSidecar`). */
export interface HookSidecar {
  image?: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  configMap?: { name: string; key: string; hookPath: string };
  pvc?: { name: string; volumePath: string; sharedComputePath?: string };
  /** `device-info`: the sidecar mounts the network-info downward-API volume. */
  downwardAPI?: string;
  /** Set for a network binding plugin's sidecar. */
  networkBindingPluginName?: string;
}

function parseAnnotation(vmi: VirtualMachineInstance): HookSidecar[] {
  const raw = vmi.metadata?.annotations?.[HOOK_SIDECARS_ANNOTATION];
  if (raw === undefined) return [];
  const field = `metadata.annotations[${HOOK_SIDECARS_ANNOTATION}]`;
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch (err) {
    throw new InvalidInputError(field, `is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(list)) throw new InvalidInputError(field, 'must be a JSON list of sidecars');
  return list.map((s, i) => {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new InvalidInputError(`${field}[${i}]`, 'must be an object');
    return s as HookSidecar;
  });
}

/**
 * The sidecars, in KubeVirt's order: the annotation's, then the binding plugins' (one per plugin
 * with a sidecar image that an interface uses; KubeVirt walks them in Go map order, which only
 * matters with two or more: ours are by plugin name). An interface naming a plugin the cluster
 * does not configure is KubeVirt's render error.
 */
export function requestedSidecars(vmi: VirtualMachineInstance, config: ClusterConfig): HookSidecar[] {
  const out = parseAnnotation(vmi);
  const used = new Set<string>();
  for (const iface of vmi.spec.domain.devices.interfaces ?? []) {
    if (!iface.binding) continue;
    if (!config.networkBindings[iface.binding.name]) throw new InvalidInputError(`spec.domain.devices.interfaces[${iface.name}].binding`, `couldn't find configuration for network binding: ${iface.binding.name}`);
    used.add(iface.binding.name);
  }
  for (const name of [...used].sort()) {
    const plugin = config.networkBindings[name]!;
    if (!plugin.sidecarImage) continue;
    out.push({ image: plugin.sidecarImage, imagePullPolicy: config.imagePullPolicy, ...(plugin.downwardAPI ? { downwardAPI: plugin.downwardAPI } : {}), networkBindingPluginName: name });
  }
  return out;
}

/**
 * A sidecar's resources: `supportContainerResources[type=sidecar]`; for a dedicated-CPU or
 * Guaranteed VMI, limits of 200m / 64M (or the configured ones) and requests equal to them.
 */
function sidecarResources(vmi: VirtualMachineInstance, config: ClusterConfig): V1ResourceRequirements {
  const o = config.supportContainerResources['sidecar'];
  const configured = (kind: 'requests' | 'limits', name: string) => {
    const q = o?.[kind][name];
    return q ? formatQuantity(q) : undefined;
  };
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  for (const r of ['cpu', 'memory']) {
    const req = configured('requests', r);
    if (req) requests[r] = req;
  }
  if (needsGuaranteedHelpers(vmi)) {
    limits['cpu'] = configured('limits', 'cpu') ?? '200m';
    limits['memory'] = configured('limits', 'memory') ?? '64M';
    requests['cpu'] = limits['cpu'];
    requests['memory'] = limits['memory'];
  } else {
    for (const r of ['cpu', 'memory']) {
      const lim = configured('limits', r);
      if (lim) limits[r] = lim;
    }
  }
  const sorted = (m: Record<string, string>) => Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]!]));
  return {
    ...(Object.keys(limits).length > 0 ? { limits: sorted(limits) } : {}),
    ...(Object.keys(requests).length > 0 ? { requests: sorted(requests) } : {}),
  };
}

/** The sidecar containers, the pod volumes they bring (ConfigMap scripts, PVCs) and the compute mounts they add. */
export interface RenderedSidecars {
  containers: V1Container[];
  volumes: V1Volume[];
  computeMounts: V1VolumeMount[];
}

export function renderSidecars(vmi: VirtualMachineInstance, config: ClusterConfig, sidecars: readonly HookSidecar[]): RenderedSidecars {
  const nonRoot = isNonRoot(vmi);
  const resources = sidecarResources(vmi, config);
  const out: RenderedSidecars = { containers: [], volumes: [], computeMounts: [] };
  for (const [i, s] of sidecars.entries()) {
    const name = `hook-sidecar-${i}`;
    const env: V1EnvVar[] = [];
    if (nonRoot) env.push(...xdgEnv());
    env.push({ name: 'CONTAINER_NAME', value: name });
    if (s.networkBindingPluginName) env.push({ name: 'NETWORK_BINDING_PLUGIN_NAME', value: s.networkBindingPluginName });
    const mounts: V1VolumeMount[] = [{ name: HOOK_SIDECAR_SOCKETS, mountPath: HOOK_SOCKETS_DIR, subPath: name }];
    if (s.downwardAPI === 'device-info') mounts.push({ name: NETWORK_INFO_VOLUME, mountPath: NETWORK_INFO_DIR });
    if (s.configMap) {
      mounts.push({ name: s.configMap.name, mountPath: s.configMap.hookPath, subPath: s.configMap.key });
      // 0755: the script is the sidecar's hook executable.
      out.volumes.push({ name: s.configMap.name, configMap: { name: s.configMap.name, defaultMode: 0o755 } });
    }
    if (s.pvc) {
      mounts.push({ name: s.pvc.name, mountPath: s.pvc.volumePath });
      out.volumes.push({ name: s.pvc.name, persistentVolumeClaim: { claimName: s.pvc.name } });
      if (s.pvc.sharedComputePath) out.computeMounts.push({ name: s.pvc.name, mountPath: s.pvc.sharedComputePath });
    }
    out.containers.push({
      name,
      // A sidecar without an image runs its ConfigMap script in KubeVirt's shim.
      image: s.image || config.sidecarShimImage,
      ...(s.imagePullPolicy ? { imagePullPolicy: s.imagePullPolicy } : {}),
      ...(s.command ? { command: [...s.command] } : {}),
      ...(s.args ? { args: [...s.args] } : {}),
      env,
      resources,
      volumeMounts: mounts,
      terminationMessagePolicy: 'FallbackToLogsOnError',
      securityContext: nonRoot
        ? nonRootDropAll()
        : { runAsUser: 0, runAsNonRoot: false },
    });
  }
  return out;
}
