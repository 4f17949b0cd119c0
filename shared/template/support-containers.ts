/**
 * KubeVirt's small helper containers beside `compute`: their resources (overridable through the
 * KubeVirt CR's `supportContainerResources`) and the `guest-console-log` native sidecar.
 */
import type { V1Container, V1EnvVar, V1ResourceRequirements, V1SecurityContext } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { NON_ROOT_UID } from '../api/well-known.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { canonicalQuantity, formatQuantity } from '../api/quantity.ts';
import { PRIVATE_DIR } from './paths.ts';
import { isCpuDedicated, vmiResources, wantsGuaranteedQos } from './vmi-traits.ts';

/** The launcher's non-root environment (`XDG_*` under its private directory), as every non-root container of KubeVirt's carries it. */
export function xdgEnv(): V1EnvVar[] {
  return [{ name: 'XDG_CACHE_HOME', value: PRIVATE_DIR }, { name: 'XDG_CONFIG_HOME', value: PRIVATE_DIR }, { name: 'XDG_RUNTIME_DIR', value: '/var/run' }];
}

/** A helper container's security context as KubeVirt's container renderer makes it: non-root 107, nothing escalated, all capabilities dropped. */
export function nonRootDropAll(): V1SecurityContext {
  return { runAsUser: NON_ROOT_UID, runAsGroup: NON_ROOT_UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
}

type Defaults = { requests: Record<string, string>; limits: Record<string, string> };

function withOverrides(config: ClusterConfig, type: string, d: Defaults, guaranteed: boolean): V1ResourceRequirements {
  const o = config.supportContainerResources[type];
  const pick = (kind: 'requests' | 'limits', name: string): string | undefined => {
    const q = o?.[kind][name];
    return q ? formatQuantity(q) : d[kind][name] === undefined ? undefined : canonicalQuantity(d[kind][name]);
  };
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  for (const k of Object.keys(d.requests)) { const v = pick('requests', k); if (v) requests[k] = v; }
  for (const k of Object.keys(d.limits)) { const v = pick('limits', k); if (v) limits[k] = v; }
  if (guaranteed) {
    // Guaranteed QoS needs every container's requests equal to its limits.
    for (const k of ['cpu', 'memory']) if (limits[k]) requests[k] = limits[k];
  }
  return { requests: sortKeys(requests), limits: sortKeys(limits) };
}

function sortKeys(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k] as string]));
}

/** Dedicated CPUs or Guaranteed QoS: helper containers must then have requests = limits. */
export function needsGuaranteedHelpers(vmi: VirtualMachineInstance): boolean {
  return isCpuDedicated(vmi) || wantsGuaranteedQos(vmiResources(vmi));
}

/** Resources of the container-disk helpers (image digest init containers). */
export function containerDiskResources(vmi: VirtualMachineInstance, config: ClusterConfig): V1ResourceRequirements {
  return withOverrides(config, 'container-disk', {
    requests: { cpu: '1m', memory: '1M', 'ephemeral-storage': '50M' },
    limits: { cpu: '10m', memory: '40M' },
  }, needsGuaranteedHelpers(vmi));
}

/** Resources of the hotplug attachment pod's container. */
export function hotplugDiskResources(config: ClusterConfig): V1ResourceRequirements {
  return withOverrides(config, 'hotplug-disk', { requests: { cpu: '10m', memory: '2M' }, limits: { cpu: '100m', memory: '80M' } }, false);
}

/** Is the serial console logged? Off with `autoattachSerialConsole: false`, the VMI's or the cluster's switch. */
export function serialConsoleLogEnabled(vmi: VirtualMachineInstance, config: ClusterConfig): boolean {
  const d = vmi.spec.domain.devices;
  if (d.autoattachSerialConsole === false) return false;
  if (d.logSerialConsole !== undefined) return d.logSerialConsole;
  return !config.disableSerialConsoleLog;
}

/** The `guest-console-log` native sidecar (an init container with `restartPolicy: Always`). */
export function guestConsoleLogContainer(vmi: VirtualMachineInstance, config: ClusterConfig, uid: string, verbosity: number): V1Container {
  return {
    name: 'guest-console-log',
    image: config.launcherImage,
    imagePullPolicy: config.imagePullPolicy,
    command: ['/usr/bin/virt-tail'],
    args: ['--logfile', `${PRIVATE_DIR}/${uid}/virt-serial0-log`],
    volumeMounts: [{ name: 'private', mountPath: PRIVATE_DIR, readOnly: true }],
    resources: withOverrides(config, 'guest-console-log', {
      requests: { memory: '35M', cpu: '5m' },
      limits: { memory: '60M', cpu: '15m' },
    }, needsGuaranteedHelpers(vmi)),
    securityContext: {
      runAsUser: NON_ROOT_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
    restartPolicy: 'Always',
    env: [{ name: 'VIRT_LAUNCHER_LOG_VERBOSITY', value: String(verbosity) }],
  };
}
