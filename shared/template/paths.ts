/** Directories inside the launcher pod that KubeVirt's components agree on. */
export const PRIVATE_DIR = '/var/run/kubevirt-private';
export const SHARE_DIR = '/var/run/kubevirt';
export const EPHEMERAL_DISK_DIR = '/var/run/kubevirt-ephemeral-disks';
export const CONTAINER_DISK_DIR = '/var/run/kubevirt/container-disks';
export const HOTPLUG_DISK_DIR = '/var/run/kubevirt/hotplug-disks';
export const IMAGE_VOLUME_DIR = '/var/run/kubevirt-image-volume';
export const KERNEL_BOOT_VOLUME_DIR = '/var/run/kubevirt-kernel-boot';
export const CONTAINER_BINARY_DIR = '/container-disk-binary';
