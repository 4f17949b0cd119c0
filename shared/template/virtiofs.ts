/**
 * virtiofs: a VMI filesystem (`devices.filesystems`) shares one of its volumes with the guest
 * through a `virtiofs-<volume>` container running virtiofsd next to `compute`, which reaches it
 * over a socket in the shared `virtiofs-containers` directory (reference §b.4). A containerPath
 * volume gets no container here: it is a path inside the pod that an external mutator fills in.
 */
import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';
import type { VirtualMachineInstance, Volume } from '../api/index.ts';
import { NON_ROOT_UID } from '../api/well-known.ts';
import { canonicalQuantity, formatQuantity } from '../api/quantity.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { PRIVATE_DIR, SHARE_DIR } from './paths.ts';
import { isCpuDedicated, vmiResources, wantsGuaranteedQos } from './vmi-traits.ts';
import { nonRootDropAll } from './support-containers.ts';

/** The emptyDir holding virtiofsd's sockets, shared with `compute`. */
export const VIRTIOFS_CONTAINERS = 'virtiofs-containers';
export const VIRTIOFS_SOCKETS_DIR = `${SHARE_DIR}/${VIRTIOFS_CONTAINERS}`;

/** Does the VMI share anything through virtiofs? */
export function hasVirtiofs(vmi: VirtualMachineInstance): boolean {
  return (vmi.spec.domain.devices.filesystems ?? []).some((f) => f.virtiofs !== undefined);
}

/** Where virtiofsd finds the volume's files: config volumes where the launcher keeps them, claims at `/<name>`. */
function sharedDir(v: Volume): string {
  if (v.configMap) return `${PRIVATE_DIR}/config-map/${v.name}`;
  if (v.secret) return `${PRIVATE_DIR}/secret/${v.name}`;
  if (v.serviceAccount) return '/var/run/secrets/kubernetes.io/serviceaccount/';
  if (v.downwardAPI) return `${PRIVATE_DIR}/downwardapi/${v.name}`;
  return `/${v.name}`;
}

/**
 * virtiofsd's resources: requests 10m / 1M, limits 100m / 80M, each overridable by
 * `supportContainerResources[type=virtiofs]`; dedicated CPUs or Guaranteed QoS make the requests
 * equal to the limits.
 */
function virtiofsResources(vmi: VirtualMachineInstance, config: ClusterConfig): V1ResourceRequirements {
  const o = config.supportContainerResources['virtiofs'];
  const pick = (kind: 'requests' | 'limits', name: string, def: string) => {
    const q = o?.[kind][name];
    return q ? formatQuantity(q) : canonicalQuantity(def);
  };
  const dedicated = isCpuDedicated(vmi);
  const guaranteed = dedicated || wantsGuaranteedQos(vmiResources(vmi));
  const limits = { cpu: pick('limits', 'cpu', '100m'), memory: pick('limits', 'memory', '80M') };
  const requests = {
    cpu: dedicated || guaranteed ? limits.cpu : pick('requests', 'cpu', '10m'),
    memory: guaranteed ? limits.memory : pick('requests', 'memory', '1M'),
  };
  return { limits, requests };
}

/** One virtiofsd container per volume a filesystem names, in volume order. */
export function virtiofsContainers(vmi: VirtualMachineInstance, config: ClusterConfig): V1Container[] {
  const shared = new Set((vmi.spec.domain.devices.filesystems ?? []).map((f) => f.name));
  if (shared.size === 0) return [];
  const resources = virtiofsResources(vmi, config);
  const out: V1Container[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (!shared.has(v.name) || v.containerPath) continue;
    const args = [`--socket-path=${VIRTIOFS_SOCKETS_DIR}/${v.name}.sock`, `--shared-dir=${sharedDir(v)}`, '--sandbox=none', '--cache=auto', '--migration-on-error=guest-error', '--migration-mode=find-paths'];
    // The service-account token's symlink belongs to the launcher's user: shown to the guest as root's.
    if (v.serviceAccount) args.push(`--translate-uid=host:${NON_ROOT_UID}:0:1`);
    out.push({
      name: `virtiofs-${v.name}`,
      image: config.launcherImage,
      imagePullPolicy: config.imagePullPolicy,
      command: ['/usr/libexec/virtiofsd'],
      args,
      // A service account is mounted into every container by the API server already.
      volumeMounts: [{ name: VIRTIOFS_CONTAINERS, mountPath: VIRTIOFS_SOCKETS_DIR }, ...(v.serviceAccount ? [] : [{ name: v.name, mountPath: sharedDir(v) }])],
      resources,
      securityContext: nonRootDropAll(),
    });
  }
  return out;
}
