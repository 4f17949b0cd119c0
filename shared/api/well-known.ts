/**
 * KubeVirt's well-known labels, annotations, finalizers, condition types and constants, as the
 * controllers and the template service use them. Spellings are KubeVirt's own (facts taken from
 * `staging/src/kubevirt.io/api/core/v1/types.go` and the virt-controller sources); import these
 * instead of repeating string literals.
 */

/** API group/version of KubeVirt's core objects. */
export const KUBEVIRT_API_VERSION = 'kubevirt.io/v1';
export const KIND_VMI = 'VirtualMachineInstance';
export const KIND_VM = 'VirtualMachine';
export const KIND_MIGRATION = 'VirtualMachineInstanceMigration';

// ---- labels -------------------------------------------------------------------------------

/** The app label on every pod KubeVirt creates: value {@link LAUNCHER_APP} or {@link HOTPLUG_DISK_APP}. */
export const APP_LABEL = 'kubevirt.io';
/** `kubevirt.io: virt-launcher` marks launcher (and migration target) pods. */
export const LAUNCHER_APP = 'virt-launcher';
/** `kubevirt.io: hotplug-disk` marks hotplug attachment pods. */
export const HOTPLUG_DISK_APP = 'hotplug-disk';
/** Launcher pod label holding the owning VMI's UID. */
export const CREATED_BY_LABEL = 'kubevirt.io/created-by';

/**
 * The pods of the VMI with UID `uid` — launcher, target and attachment pods — as KubeVirt's
 * controllers see them: its pod informer holds only pods with the `kubevirt.io` label.
 */
export function vmiPodsSelector(uid: string): string {
  return `${APP_LABEL},${CREATED_BY_LABEL}=${uid}`;
}
/** Launcher pod label: the VMI hostname (not the VM name). */
export const VM_NAME_LABEL = 'vm.kubevirt.io/name';
/** Launcher pod label: the VMI name, or a hashed short form when longer than 63 characters. */
export const VMI_ID_LABEL = 'vmi.kubevirt.io/id';
/** Node the VMI runs on (VMI label, set at handoff). */
export const NODE_NAME_LABEL = 'kubevirt.io/nodeName';
/** VMI label: its launcher runs an image other than the current one (the VMI controller sets it; the metrics read it). */
export const OUTDATED_LAUNCHER_IMAGE_LABEL = 'kubevirt.io/outdatedLauncherImage';
/** Target pod label: the migration's UID. */
export const MIGRATION_JOB_UID_LABEL = 'kubevirt.io/migrationJobUID';
/** Migration condition: its target pod was refused for exceeding a quota; a quota change wakes it (functions/migration/wakes.ts). */
export const MIGRATION_REJECTED_BY_QUOTA_CONDITION = 'migrationRejectedByResourceQuota';
/** Label on a VMI created by a VM: points back to the VM. */
export const VM_LABEL = 'kubevirt.io/vm';
/** Nodes eligible to run VMIs. */
export const SCHEDULABLE_NODE_LABEL = 'kubevirt.io/schedulable';
export const CPU_MANAGER_NODE_LABEL = 'kubevirt.io/cpumanager';
export const REALTIME_NODE_LABEL = 'kubevirt.io/realtime';
export const SEV_NODE_LABEL = 'kubevirt.io/sev';
export const SEVES_NODE_LABEL = 'kubevirt.io/sev-es';
export const SEVSNP_NODE_LABEL = 'kubevirt.io/sev-snp';
export const TDX_NODE_LABEL = 'kubevirt.io/tdx';
export const S390_PV_NODE_LABEL = 'kubevirt.io/s390-pv';
export const MACHINE_TYPE_NODE_LABEL_PREFIX = 'machine-type.node.kubevirt.io/';
export const CPU_MODEL_NODE_LABEL_PREFIX = 'cpu-model.node.kubevirt.io/';
export const CPU_FEATURE_NODE_LABEL_PREFIX = 'cpu-feature.node.kubevirt.io/';
export const CPU_VENDOR_NODE_LABEL_PREFIX = 'cpu-vendor.node.kubevirt.io/';
export const HYPERV_NODE_LABEL_PREFIX = 'hyperv.node.kubevirt.io/';
export const HOST_MODEL_CPU_NODE_LABEL_PREFIX = 'host-model-cpu.node.kubevirt.io/';
export const HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX = 'host-model-required-features.node.kubevirt.io/';
export const CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX = 'cpu-model-migration.node.kubevirt.io/';
export const TSC_FREQUENCY_NODE_LABEL_PREFIX = 'scheduling.node.kubevirt.io/tsc-frequency-';
export const VM_ARCH_NODE_LABEL_PREFIX = 'kubevirt.io/vm-arch-';
export const OBSOLETE_HOST_MODEL_NODE_LABEL = 'node-labeller.kubevirt.io/obsolete-host-model';
export const ARCH_NODE_LABEL = 'kubernetes.io/arch';
export const HOSTNAME_NODE_LABEL = 'kubernetes.io/hostname';
/** Namespace label: float ≥ 1, ratio for automatic memory limits. */
export const AUTO_MEMORY_LIMITS_RATIO_LABEL = 'alpha.kubevirt.io/auto-memory-limits-ratio';

// ---- annotations --------------------------------------------------------------------------

/** Launcher pod annotation: the domain (VMI) name. */
export const DOMAIN_ANNOTATION = 'kubevirt.io/domain';
/** Hotplug pod annotations naming the VMI (the owner ref points at the launcher pod). */
export const OWNER_VMI_NAME_ANNOTATION = 'kubevirt.io/owner-vmi-name';
export const OWNER_VMI_UID_ANNOTATION = 'kubevirt.io/owner-vmi-uid';
/** Target pod annotation: the migration's name. */
export const MIGRATION_JOB_NAME_ANNOTATION = 'kubevirt.io/migrationJobName';
/** Target pod annotation: when virt-handler reported the target domain ready (Go's `time.Time.String()`). */
export const MIGRATION_TARGET_READY_TIMESTAMP_ANNOTATION = 'kubevirt.io/migration-target-ready-timestamp';
export const MEMORY_OVERHEAD_BYTES_ANNOTATION = 'kubevirt.io/memory-overhead-bytes';
export const MIGRATION_TRANSPORT_UNIX_ANNOTATION = 'kubevirt.io/migrationTransportUnix';
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';
export const REQUEST_EVICT_ONLY_ANNOTATION = 'descheduler.alpha.kubernetes.io/request-evict-only';
/** On a launcher pod whose VMI is marked for eviction (`status.evacuationNodeName`): the descheduler counts it as being evicted. */
export const EVICTION_IN_PROGRESS_ANNOTATION = 'descheduler.alpha.kubernetes.io/eviction-in-progress';
export const EPHEMERAL_PROVISIONING_ANNOTATION = 'kubevirt.io/ephemeral-provisioning';
export const NONROOT_ANNOTATION = 'kubevirt.io/nonroot';
export const SKIP_BACKUP_HOOKS_ANNOTATION = 'kubevirt.io/skip-backup-hooks';
export const LIBVIRT_LOG_FILTERS_ANNOTATION = 'kubevirt.io/libvirt-log-filters';
export const KEEP_LAUNCHER_ALIVE_ANNOTATION = 'kubevirt.io/keep-launcher-alive-after-failure';
export const FUNC_TEST_LAUNCHER_FAIL_FAST_ANNOTATION = 'kubevirt.io/func-test-virt-launcher-fail-fast';
export const IMAGE_VOLUME_SKIP_DIGEST_ANNOTATION = 'kubevirt.io/image-volume-skip-digest-resolution';
export const HOOK_SIDECARS_ANNOTATION = 'hooks.kubevirt.io/hookSidecars';
export const EMULATOR_THREAD_EVEN_PARITY_ANNOTATION = 'alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity';
export const NETWORK_INFO_ANNOTATION = 'kubevirt.io/network-info';
export const ISTIO_INJECT_ANNOTATION = 'sidecar.istio.io/inject';
export const ISTIO_KUBEVIRT_INTERFACES_ANNOTATION = 'traffic.sidecar.istio.io/kubevirtInterfaces';
export const ISTIO_REROUTE_ANNOTATION = 'istio.io/reroute-virtual-interfaces';
export const MULTUS_NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const MULTUS_DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';
export const MULTUS_RESOURCE_NAME_ANNOTATION = 'k8s.v1.cni.cncf.io/resourceName';
/** VMI annotations never copied to the launcher pod (plus every `kubectl.kubernetes.io` key). */
export const STORAGE_OBSERVED_API_VERSION_ANNOTATION = 'kubevirt.io/storage-observed-api-version';
export const LATEST_OBSERVED_API_VERSION_ANNOTATION = 'kubevirt.io/latest-observed-api-version';
export const VELERO_PRE_HOOK_CONTAINER = 'pre.hook.backup.velero.io/container';
export const VELERO_PRE_HOOK_COMMAND = 'pre.hook.backup.velero.io/command';
export const VELERO_PRE_HOOK_TIMEOUT = 'pre.hook.backup.velero.io/timeout';
export const VELERO_POST_HOOK_CONTAINER = 'post.hook.backup.velero.io/container';
export const VELERO_POST_HOOK_COMMAND = 'post.hook.backup.velero.io/command';

// ---- finalizers ---------------------------------------------------------------------------

/** Added to every VMI by the mutating webhook on create. */
export const VMI_FINALIZER = 'kubevirt.io/foregroundDeleteVirtualMachine';
/** Added by the VM controller to VMIs it owns. */
export const VM_CONTROLLER_FINALIZER = 'kubevirt.io/virtualMachineControllerFinalize';
export const MIGRATION_FINALIZER = 'kubevirt.io/migrationJobFinalize';

// ---- VMI condition types ------------------------------------------------------------------

export const VMI_CONDITION = {
  Ready: 'Ready',
  PodScheduled: 'PodScheduled',
  Synchronized: 'Synchronized',
  Paused: 'Paused',
  LiveMigratable: 'LiveMigratable',
  StorageLiveMigratable: 'StorageLiveMigratable',
  AgentConnected: 'AgentConnected',
  DataVolumesReady: 'DataVolumesReady',
  Provisioning: 'kubevirt.io/provisioning',
  MigrationRequired: 'MigrationRequired',
  VCPUChange: 'HotVCPUChange',
  MemoryChange: 'HotMemoryChange',
  EvictionRequested: 'EvictionRequested',
} as const;

/** The launcher pod's readiness gate (set by virt-handler when the guest is unpaused). */
export const VIRTUAL_MACHINE_UNPAUSED_CONDITION = 'kubevirt.io/virtual-machine-unpaused';

// ---- constants ----------------------------------------------------------------------------

/** UID/GID of the qemu user in the launcher image: non-root launcher pods run as this. */
export const NON_ROOT_UID = 107;
export const ROOT_UID = 0;
/** `DefaultGracePeriodSeconds` of a VMI. */
export const DEFAULT_VMI_GRACE_PERIOD_SECONDS = 30;
/** The compute container's name. */
export const COMPUTE_CONTAINER = 'compute';

// ---- snapshot, restore, export and CDI (the storage controllers share these) ---------------

/** API group/version of VirtualMachineSnapshot, its content and VirtualMachineRestore. */
export const SNAPSHOT_API_VERSION = 'snapshot.kubevirt.io/v1beta1';
/** On a restored PVC or DataVolume and on a clone's target VM: the restore that made it. */
export const RESTORE_NAME_ANNOTATION = 'restore.kubevirt.io/name';
/** On a restored VM: the UID of the last restore applied to it. */
export const LAST_RESTORE_UID_ANNOTATION = 'restore.kubevirt.io/lastRestoreUID';
/** CDI: a DataVolume may adopt an existing PVC of its name. */
export const ALLOW_CLAIM_ADOPTION_ANNOTATION = 'cdi.kubevirt.io/allowClaimAdoption';
/** CDI: the content type of a claim (`kubevirt`, `archive`). */
export const CONTENT_TYPE_ANNOTATION = 'cdi.kubevirt.io/storage.contentType';
/** virt-handler's node heartbeat (an RFC 3339 time), which the node controller checks. */
export const HEARTBEAT_ANNOTATION = 'kubevirt.io/heartbeat';
/** The path virt-handler mounts hotplugged (and backup utility) volumes under in the launcher. */
export const HOTPLUG_DISKS_PATH = '/var/run/kubevirt/hotplug-disks';


/** An interface's `state` when it is to be unplugged (spec.domain.devices.interfaces[].state). */
export const INTERFACE_STATE_ABSENT = 'absent';
