/**
 * Container disks without image volumes (the ImageVolume gate off; reference §b.4): each disk
 * image runs as a `volume<name>` container that copies nothing but serves its disk file into the
 * shared `container-disks` directory, the kernel-boot image likewise as `volumekernel-boot-volume`.
 * Init containers first copy the `container-disk` binary out of the launcher image
 * (`container-disk-binary`) and pre-pull every image (`volume<name>-init`, `--no-op`).
 */
import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { NON_ROOT_UID } from '../api/well-known.ts';
import { canonicalQuantity, formatQuantity } from '../api/quantity.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { EPHEMERAL_DISK_DIR } from './paths.ts';
import { KERNEL_BOOT_VOLUME } from './render-volumes.ts';
import { containerDiskResources, needsGuaranteedHelpers, nonRootDropAll, xdgEnv } from './support-containers.ts';
import { isNonRoot, vmiUid } from './vmi-traits.ts';

interface DiskImage {
  volume: string;
  image: string;
  pullPolicy: string | undefined;
  /** `disk_<index>` of a VMI volume, `kernel-boot` for the kernel-boot image. */
  file: string;
}

function diskImages(vmi: VirtualMachineInstance, imageIds: Readonly<Record<string, string>>): DiskImage[] {
  const out: DiskImage[] = [];
  for (const [i, v] of (vmi.spec.volumes ?? []).entries()) {
    if (!v.containerDisk || v.name === KERNEL_BOOT_VOLUME) continue;
    out.push({ volume: v.name, image: imageIds[v.name] ?? v.containerDisk.image ?? '', pullPolicy: v.containerDisk.imagePullPolicy, file: `disk_${i}` });
  }
  const kb = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (kb?.image) out.push({ volume: KERNEL_BOOT_VOLUME, image: imageIds[KERNEL_BOOT_VOLUME] ?? kb.image, pullPolicy: kb.imagePullPolicy, file: 'kernel-boot' });
  return out;
}

/**
 * `container-disk-binary`'s resources: requests 10m / 1M, limits 100m / 40M, or 10m / 40M for
 * both on a dedicated or Guaranteed VMI; `supportContainerResources[type=container-disk]`
 * overrides each.
 */
function binaryResources(vmi: VirtualMachineInstance, config: ClusterConfig): V1ResourceRequirements {
  const o = config.supportContainerResources['container-disk'];
  const pick = (kind: 'requests' | 'limits', name: string, def: string) => {
    const q = o?.[kind][name];
    return q ? formatQuantity(q) : canonicalQuantity(def);
  };
  if (needsGuaranteedHelpers(vmi)) {
    const both = { cpu: pick('limits', 'cpu', '10m'), memory: pick('limits', 'memory', '40M') };
    return { limits: both, requests: { ...both } };
  }
  return { limits: { cpu: pick('limits', 'cpu', '100m'), memory: pick('limits', 'memory', '40M') }, requests: { cpu: pick('requests', 'cpu', '10m'), memory: pick('requests', 'memory', '1M') } };
}

/** The disk-serving containers (after compute) and the init containers (after the console log's). */
export function containerDiskContainers(vmi: VirtualMachineInstance, config: ClusterConfig, imageIds: Readonly<Record<string, string>> = {}): { containers: V1Container[]; initContainers: V1Container[] } {
  const images = diskImages(vmi, imageIds);
  if (images.length === 0) return { containers: [], initContainers: [] };
  const dataDir = `${EPHEMERAL_DISK_DIR}/container-disk-data/${vmiUid(vmi)}`;
  const resources = containerDiskResources(vmi, config);
  // The disk containers run as the launcher's non-root user whatever the launcher runs as.
  const diskContainer = (d: DiskImage, init: boolean): V1Container => ({
    name: `volume${d.volume}${init ? '-init' : ''}`,
    image: d.image,
    ...(d.pullPolicy ? { imagePullPolicy: d.pullPolicy } : {}),
    command: ['/usr/bin/container-disk'],
    args: init ? ['--no-op'] : ['--copy-path', `${dataDir}/${d.file}`],
    volumeMounts: [{ name: 'container-disks', mountPath: dataDir }, { name: 'virt-bin-share-dir', mountPath: '/usr/bin' }],
    resources: structuredClone(resources),
    securityContext: { runAsUser: NON_ROOT_UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  });
  const nonRoot = isNonRoot(vmi);
  const binary: V1Container = {
    name: 'container-disk-binary',
    image: config.launcherImage,
    imagePullPolicy: config.imagePullPolicy,
    command: ['/usr/bin/cp'],
    args: ['--preserve=all', '/usr/bin/container-disk', '/init/usr/bin/container-disk'],
    ...(nonRoot ? { env: xdgEnv() } : {}),
    resources: binaryResources(vmi, config),
    volumeMounts: [{ name: 'virt-bin-share-dir', mountPath: '/init/usr/bin' }],
    terminationMessagePolicy: 'FallbackToLogsOnError',
    securityContext: nonRoot
      ? nonRootDropAll()
      : { runAsUser: 0, runAsNonRoot: false, capabilities: { drop: ['ALL'] } },
  };
  return {
    containers: images.map((d) => diskContainer(d, false)),
    initContainers: [binary, ...images.map((d) => diskContainer(d, true))],
  };
}
