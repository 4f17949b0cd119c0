/**
 * The launcher pod's volumes, the compute container's mounts and block devices, and the
 * image-volume digest init containers (KubeVirt's `VolumeRenderer`, reference §b.5). Order
 * matters for golden equality and follows KubeVirt's: base emptyDirs, config volumes
 * (secret/configMap/downwardAPI), VMI volumes, access credentials, image volumes, hugepages,
 * hotplug, network info.
 */
import type {
  V1Container, V1Volume, V1VolumeDevice, V1VolumeMount,
} from '@kubernetes/client-node';
import type { VirtualMachineInstance, Volume } from '../api/index.ts';
import { IMAGE_VOLUME_SKIP_DIGEST_ANNOTATION, NETWORK_INFO_ANNOTATION, NON_ROOT_UID } from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { PvcNotFoundError } from './errors.ts';
import { containerDiskResources } from './support-containers.ts';
import { HOOK_SIDECAR_SOCKETS, HOOK_SOCKETS_DIR, NETWORK_INFO_DIR, NETWORK_INFO_VOLUME } from './sidecars.ts';
import { hasVirtiofs, VIRTIOFS_CONTAINERS, VIRTIOFS_SOCKETS_DIR } from './virtiofs.ts';
import { backendStorageNeeded, cbtOn } from '../storage/backend-storage.ts';
import { isNonRoot } from './vmi-traits.ts';
import {
  CONTAINER_BINARY_DIR, CONTAINER_DISK_DIR, EPHEMERAL_DISK_DIR, HOTPLUG_DISK_DIR, IMAGE_VOLUME_DIR, KERNEL_BOOT_VOLUME_DIR, PRIVATE_DIR, SHARE_DIR,
} from './paths.ts';

export const KERNEL_BOOT_VOLUME = 'kernel-boot-volume';
export const LAUNCHER_VOLUME = 'launcher-volume';

/** What the renderer knows about a claim; `undefined` lookups mean "not known: assume filesystem". */
export interface PvcInfo {
  volumeMode?: 'Block' | 'Filesystem';
  accessModes?: string[];
  /** The claim's UID (a persistent reservation labels the pod with it). */
  uid?: string;
}

export interface VolumeRenderInput {
  /** PVCs by claim name. When given, a missing claim fails with {@link PvcNotFoundError}. */
  pvcs?: Record<string, PvcInfo> | undefined;
  /** Image references pinned to digests by volume name (migration targets). */
  imageIds?: Record<string, string> | undefined;
  /** The backend-storage PVC (persistent TPM/EFI), when the VMI needs one. */
  backendPvc?: string | undefined;
  /** The pod has hook sidecars: they share the `hook-sidecar-sockets` directory with the launcher. */
  hookSidecars?: boolean | undefined;
  /** A binding plugin's sidecar reads the network-info annotation (`downwardAPI: device-info`). */
  deviceInfoPlugin?: boolean | undefined;
}

export interface RenderedVolumes {
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
  devices: V1VolumeDevice[];
  /** RWX filesystem PVC mount paths (the `SHARED_FILESYSTEM_PATHS` env var). */
  sharedFilesystemPaths: string[];
  /** Digest-resolving init containers for image volumes. */
  initContainers: V1Container[];
}

const emptyDir = (name: string): V1Volume => ({ name, emptyDir: {} });

/** Volumes attached later by hotplug: in status as hotplug volumes, or flagged hotpluggable. */
export function hotplugVolumeNames(vmi: VirtualMachineInstance): Set<string> {
  const names = new Set<string>();
  for (const s of vmi.status?.volumeStatus ?? []) if (s.hotplugVolume !== undefined) names.add(s.name);
  for (const v of vmi.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.hotpluggable || v.dataVolume?.hotpluggable || v.memoryDump !== undefined) names.add(v.name);
  }
  return names;
}

function claimOf(v: Volume): string | undefined {
  return v.persistentVolumeClaim?.claimName ?? v.ephemeral?.persistentVolumeClaim?.claimName ?? v.dataVolume?.name;
}

/** Renders volumes, mounts and devices for the launcher pod. */
export function renderVolumes(vmi: VirtualMachineInstance, config: ClusterConfig, input: VolumeRenderInput = {}): RenderedVolumes {
  const imageVolumes = gateEnabled(config, 'ImageVolume');
  const volumes: V1Volume[] = ['private', 'public', 'sockets', 'virt-bin-share-dir', 'libvirt-runtime', 'ephemeral-disks'].map(emptyDir);
  const mounts: V1VolumeMount[] = [
    { name: 'private', mountPath: PRIVATE_DIR },
    { name: 'public', mountPath: SHARE_DIR },
    { name: 'ephemeral-disks', mountPath: EPHEMERAL_DISK_DIR },
    { name: 'libvirt-runtime', mountPath: '/var/run/libvirt' },
    { name: 'sockets', mountPath: `${SHARE_DIR}/sockets` },
  ];
  if (!imageVolumes) {
    volumes.push(emptyDir('container-disks'));
    mounts.push({ name: 'container-disks', mountPath: CONTAINER_DISK_DIR, mountPropagation: 'HostToContainer' });
  }
  const devices: V1VolumeDevice[] = [];
  const shared: string[] = [];
  const initContainers: V1Container[] = [];
  const specVolumes = vmi.spec.volumes ?? [];
  const hotplug = hotplugVolumeNames(vmi);
  const field = (i: number, f: string) => `spec.volumes[${i}].${f}`;

  if (specVolumes.filter((v) => v.downwardMetrics).length > 1) {
    throw new InvalidInputError('spec.volumes', 'at most one downwardMetrics volume is allowed');
  }
  for (const [i, v] of specVolumes.entries()) {
    if (!v.name) throw new InvalidInputError(field(i, 'name'), 'is required');
  }

  // Config volumes: the pod volume always, the read-only mount only when a disk uses it.
  for (const v of specVolumes) {
    if (v.secret) volumes.push({ name: v.name, secret: { secretName: v.secret.secretName, ...(v.secret.optional !== undefined && { optional: v.secret.optional }) } });
    if (v.configMap) volumes.push({ name: v.name, configMap: { name: v.configMap.name, ...(v.configMap.optional !== undefined && { optional: v.configMap.optional }) } });
    if (v.downwardAPI) volumes.push({ name: v.name, downwardAPI: { items: (v.downwardAPI.fields ?? []) as NonNullable<V1Volume['downwardAPI']>['items'] } });
  }
  const byName = new Map(specVolumes.map((v) => [v.name, v]));
  for (const d of vmi.spec.domain.devices.disks ?? []) {
    const v = byName.get(d.name);
    if (v?.secret) mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/secret/${v.name}`, readOnly: true });
    if (v?.configMap) mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/config-map/${v.name}`, readOnly: true });
    if (v?.downwardAPI) mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/downwardapi/${v.name}`, readOnly: true });
  }

  for (const [i, v] of specVolumes.entries()) {
    if (hotplug.has(v.name)) continue;
    const claim = claimOf(v);
    if (claim !== undefined) {
      const info = input.pvcs === undefined ? {} : input.pvcs[claim];
      if (info === undefined) throw new PvcNotFoundError(claim);
      if (info.volumeMode === 'Block') devices.push({ name: v.name, devicePath: `/dev/${v.name}` });
      else {
        const path = `${PRIVATE_DIR}/vmi-disks/${v.name}`;
        mounts.push({ name: v.name, mountPath: path });
        if (info.accessModes?.includes('ReadWriteMany')) shared.push(path);
      }
      if (v.persistentVolumeClaim) {
        volumes.push({ name: v.name, persistentVolumeClaim: { claimName: claim, ...(v.persistentVolumeClaim.readOnly !== undefined && { readOnly: v.persistentVolumeClaim.readOnly }) } });
      } else if (v.ephemeral) {
        volumes.push({ name: v.name, persistentVolumeClaim: { ...v.ephemeral.persistentVolumeClaim, claimName: claim } });
      } else {
        volumes.push({ name: v.name, persistentVolumeClaim: { claimName: claim } });
      }
    }
    if (v.hostDisk) {
      const t = v.hostDisk.type;
      if (t !== 'Disk' && t !== 'DiskOrCreate') throw new InvalidInputError(field(i, 'hostDisk.type'), `must be Disk or DiskOrCreate, got '${t}'`);
      if (!v.hostDisk.path?.startsWith('/')) throw new InvalidInputError(field(i, 'hostDisk.path'), 'must be an absolute path');
      mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/vmi-disks/${v.name}` });
      const dir = v.hostDisk.path.slice(0, v.hostDisk.path.lastIndexOf('/')) || '/';
      volumes.push({ name: v.name, hostPath: { path: dir, type: t === 'Disk' ? 'Directory' : 'DirectoryOrCreate' } });
    }
    if (v.downwardMetrics) {
      volumes.push({ name: v.name, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } });
      mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/downwardmetric-disk` });
    }
    const cloudInit = v.cloudInitNoCloud ?? v.cloudInitConfigDrive;
    if (cloudInit) {
      for (const [ref, suffix, sub] of [[cloudInit.secretRef, 'udata', 'user'], [cloudInit.networkDataSecretRef, 'ndata', 'network']] as const) {
        if (!ref) continue;
        const name = `${v.name}-${suffix}`;
        volumes.push({ name, secret: { secretName: ref.name ?? '' } });
        mounts.push({ name, mountPath: `${PRIVATE_DIR}/secret/${v.name}/${sub}data`, subPath: `${sub}data`, readOnly: true });
        mounts.push({ name, mountPath: `${PRIVATE_DIR}/secret/${v.name}/${sub}Data`, subPath: `${sub}Data`, readOnly: true });
      }
    }
    if (v.sysprep) {
      if (v.sysprep.secret) volumes.push({ name: v.name, secret: { secretName: v.sysprep.secret.name ?? '' } });
      else if (v.sysprep.configMap) volumes.push({ name: v.name, configMap: { name: v.sysprep.configMap.name ?? '' } });
      else throw new InvalidInputError(field(i, 'sysprep'), 'needs a secret or a configMap');
      mounts.push({ name: v.name, mountPath: `${PRIVATE_DIR}/sysprep/${v.name}`, readOnly: true });
    }
  }

  for (const cred of vmi.spec.accessCredentials ?? []) {
    const secret = cred.sshPublicKey?.source?.secret?.secretName ?? cred.userPassword?.source?.secret?.secretName;
    if (!secret) continue;
    const name = `${secret}-access-cred`;
    volumes.push({ name, secret: { secretName: secret } });
    mounts.push({ name, mountPath: `${PRIVATE_DIR}/secret/${name}`, readOnly: true });
  }

  renderBackendStorage(vmi, input.backendPvc, volumes, mounts);

  if (imageVolumes) {
    const ids = input.imageIds ?? {};
    const skipDigest = vmi.metadata?.annotations?.[IMAGE_VOLUME_SKIP_DIGEST_ANNOTATION] === 'true';
    let needLauncherVolume = false;
    const addImage = (name: string, image: string, pullPolicy: string | undefined, mountPath: string) => {
      volumes.push({ name, image: { reference: ids[name] ?? image, ...(pullPolicy && { pullPolicy }) } });
      mounts.push({ name, mountPath, readOnly: true });
      if (!skipDigest && !(ids[name] ?? '').includes('@sha256:')) {
        needLauncherVolume = true;
        initContainers.push(imageDigestInitContainer(vmi, config, name, image, pullPolicy));
      }
    };
    for (const [i, v] of specVolumes.entries()) {
      if (v.containerDisk) {
        if (!v.containerDisk.image) throw new InvalidInputError(field(i, 'containerDisk.image'), 'is required');
        addImage(v.name, v.containerDisk.image, v.containerDisk.imagePullPolicy, `${IMAGE_VOLUME_DIR}/disk_${i}`);
      }
    }
    const kb = vmi.spec.domain.firmware?.kernelBoot?.container;
    if (kb?.image) addImage(KERNEL_BOOT_VOLUME, kb.image, kb.imagePullPolicy, KERNEL_BOOT_VOLUME_DIR);
    if (needLauncherVolume) volumes.push({ name: LAUNCHER_VOLUME, image: { reference: config.launcherImage, pullPolicy: config.imagePullPolicy } });
  }
  // With the gate off the disks are served by containers instead (container-disk-containers.ts).

  // Hook sidecars' sockets, then the Plugins gate's socket directory, after the image volumes as KubeVirt orders them.
  if (input.hookSidecars) {
    volumes.push(emptyDir(HOOK_SIDECAR_SOCKETS));
    mounts.push({ name: HOOK_SIDECAR_SOCKETS, mountPath: HOOK_SOCKETS_DIR });
  }
  if (gateEnabled(config, 'Plugins')) {
    volumes.push(emptyDir('kubevirt-plugin-sockets'));
    mounts.push({ name: 'kubevirt-plugin-sockets', mountPath: '/var/run/kubevirt-plugin' });
  }
  if (vmi.spec.domain.memory?.hugepages) {
    volumes.push({ name: 'hugepages', emptyDir: { medium: 'HugePages' } });
    mounts.push({ name: 'hugepages', mountPath: '/dev/hugepages' });
    volumes.push({ name: 'hugetblfs-dir', emptyDir: { medium: 'HugePages' } });
    mounts.push({ name: 'hugetblfs-dir', mountPath: '/dev/hugepages/libvirt/qemu' });
  }
  if (!vmi.spec.domain.devices.disableHotplug) {
    volumes.push(emptyDir('hotplug-disks'));
    mounts.push({ name: 'hotplug-disks', mountPath: HOTPLUG_DISK_DIR, mountPropagation: 'HostToContainer' });
  }
  if (input.deviceInfoPlugin || (vmi.spec.domain.devices.interfaces ?? []).some((i) => i.sriov !== undefined)) {
    mounts.push({ name: NETWORK_INFO_VOLUME, mountPath: NETWORK_INFO_DIR });
    volumes.push({
      name: NETWORK_INFO_VOLUME,
      downwardAPI: { items: [{ path: 'network-info', fieldRef: { fieldPath: `metadata.annotations['${NETWORK_INFO_ANNOTATION}']` } }] },
    });
  }
  // virtiofs (virtiofs.ts): the sockets directory of the virtiofsd containers, last. A
  // containerPath volume has no pod volume: its path is the launcher's own.
  if (hasVirtiofs(vmi)) {
    mounts.push({ name: VIRTIOFS_CONTAINERS, mountPath: VIRTIOFS_SOCKETS_DIR });
    volumes.push(emptyDir(VIRTIOFS_CONTAINERS));
  }
  // A VMI volume whose name collides with one of the launcher's own (or a derived `-udata`,
  // `-access-cred` name) would yield a pod the apiserver rejects: refuse it here instead.
  const seen = new Set<string>();
  for (const v of volumes) {
    if (seen.has(v.name)) {
      const i = specVolumes.findIndex((sv) => sv.name === v.name);
      throw new InvalidInputError(i >= 0 ? field(i, 'name') : 'spec.volumes', `volume name '${v.name}' collides with another pod volume`);
    }
    seen.add(v.name);
  }
  return { volumes, mounts, devices, sharedFilesystemPaths: shared, initContainers };
}

/** `volume<name>`: pulls an image volume's image once to learn its digest (`--no-op`). */
function imageDigestInitContainer(vmi: VirtualMachineInstance, config: ClusterConfig, name: string, image: string, pullPolicy: string | undefined): V1Container {
  return {
    name: `volume${name}`,
    image,
    ...(pullPolicy && { imagePullPolicy: pullPolicy }),
    command: [`${CONTAINER_BINARY_DIR}/usr/bin/container-disk`],
    args: ['--no-op'],
    resources: containerDiskResources(vmi, config),
    securityContext: {
      runAsUser: NON_ROOT_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [{ name: LAUNCHER_VOLUME, mountPath: CONTAINER_BINARY_DIR, readOnly: true }],
  };
}

/** `[volume name, image]` for every image the pod pulls as a volume (container disks, kernel boot). */
export function renderVolumesImageNames(vmi: VirtualMachineInstance): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const v of vmi.spec.volumes ?? []) if (v.containerDisk?.image) out.push([v.name, v.containerDisk.image]);
  const kb = vmi.spec.domain.firmware?.kernelBoot?.container?.image;
  if (kb) out.push([KERNEL_BOOT_VOLUME, kb]);
  return out;
}

/**
 * The `vm-state` volume on the backend-storage PVC and its sub-path mounts (reference-vm-vmi-depth
 * §2), in KubeVirt's order: the meta mount, the non-root launcher's `libvirt` and `libvirt/qemu`
 * emptyDirs (so the sub-directories the PVC mounts under are the launcher's own), then swtpm,
 * nvram and the changed-block-tracking overlays.
 */
function renderBackendStorage(vmi: VirtualMachineInstance, claimName: string | undefined, volumes: V1Volume[], mounts: V1VolumeMount[]): void {
  if (!backendStorageNeeded(vmi)) return;
  if (!claimName) throw new InvalidInputError('spec.domain', "can't generate manifest without backend-storage PVC, waiting for the PVC to be created");
  const nonRoot = isNonRoot(vmi);
  volumes.push({ name: 'vm-state', persistentVolumeClaim: { claimName } });
  mounts.push({ name: 'vm-state', mountPath: '/run/kubevirt-private/backend-storage-meta', subPath: 'meta' });
  if (nonRoot) {
    volumes.push({ name: 'private-libvirt', emptyDir: {} }, { name: 'private-libvirt-qemu', emptyDir: {} });
    mounts.push({ name: 'private-libvirt', mountPath: `${PRIVATE_DIR}/libvirt` }, { name: 'private-libvirt-qemu', mountPath: `${PRIVATE_DIR}/libvirt/qemu` });
  }
  const tpm = vmi.spec.domain.devices.tpm as { enabled?: boolean; persistent?: boolean } | undefined;
  if (tpm && tpm.enabled !== false && tpm.persistent === true) {
    mounts.push({ name: 'vm-state', mountPath: nonRoot ? `${PRIVATE_DIR}/libvirt/qemu/swtpm` : '/var/lib/libvirt/swtpm', subPath: 'swtpm' });
    mounts.push({ name: 'vm-state', mountPath: nonRoot ? `${PRIVATE_DIR}/var/lib/swtpm-localca` : '/var/lib/swtpm-localca', subPath: 'swtpm-localca' });
  }
  if (vmi.spec.domain.firmware?.bootloader?.efi?.persistent === true) {
    mounts.push({ name: 'vm-state', mountPath: nonRoot ? `${PRIVATE_DIR}/libvirt/qemu/nvram` : '/var/lib/libvirt/qemu/nvram', subPath: 'nvram' });
  }
  if (cbtOn(vmi)) {
    mounts.push({ name: 'vm-state', mountPath: nonRoot ? `${PRIVATE_DIR}/libvirt/qemu/cbt` : '/var/lib/libvirt/qemu/cbt', subPath: 'cbt' });
  }
}
