/**
 * The cluster configuration the template service needs, resolved once from a KubeVirt CR
 * (`clusterConfigFromKubeVirt`) with KubeVirt's defaults (`pkg/virt-config`) filled in.
 * Invalid values (ratio/overcommit ≤ 0, a bad ratio string) are rejected with a typed error
 * naming the field — KubeVirt keeps its last good config in that case; callers can do the same.
 */
import type { ChangedBlockTrackingSelectors, KubeVirt, KubeVirtConfiguration, LabelSelector } from '../api/index.ts';
import { validateSelector } from '../predicates/label-selector.ts';
import { InvalidInputError } from '../errors.ts';
import { REFERENCE_POLICY } from '../instancetype/well-known.ts';
import { parseQuantity, quantityValue, type Quantity } from '../api/quantity.ts';

/** Launcher image registry and tag used when the KubeVirt CR names none. */
export const DEFAULT_IMAGE_REGISTRY = 'quay.io/kubevirt';
export const DEFAULT_IMAGE_TAG = 'v1.9.0';

/** Feature gates that are GA in KubeVirt: always on, whatever the CR says. */
const GA_GATES = new Set([
  'LiveMigration', 'NonRoot', 'VmiMemoryOverheadReport', 'MigrationPriorityQueue', 'AutoResourceLimitsGate',
  'VMPersistentState', 'CPUNodeDiscoveryGate', 'SRIOV', 'HotplugNICs', 'DataVolumes',
]);
/*
 * Deprecated gates (`HotplugVolumes`, the legacy volume hotplug that goes through
 * `status.volumeRequests`) are in neither set: on only when listed in `featureGates`.
 */
/** Beta gates: on unless explicitly disabled. */
const BETA_ON_GATES = new Set([
  'ImageVolume', 'PodSecondaryInterfaceNamingUpgrade', 'ExternalNetResourceInjection', 'DecentralizedLiveMigration',
  'DeclarativeHotplugVolumes', 'Snapshot', 'NodeRestriction', 'GPUsWithDRA', 'HostDevicesWithDRA', 'RebootPolicy',
  'KubevirtSeccompProfile', 'WorkloadEncryptionSEV',
]);

/** Requests/limits overrides for KubeVirt's helper containers, by `supportContainerResources[].type`. */
export interface SupportContainerOverride {
  requests: Record<string, Quantity>;
  limits: Record<string, Quantity>;
}

/** Per-architecture settings. */
export interface ArchSettings {
  machineType: string;
  ovmfPath: string;
}

/** Everything rendering reads from the cluster, already defaulted and validated. */
export interface ClusterConfig {
  /** Full launcher image reference, e.g. `quay.io/kubevirt/virt-launcher:v1.9.0`. */
  launcherImage: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  /** Global pull secret of the controller (`--image-pull-secret`), "" for none. */
  imagePullSecret: string;
  /** Enabled feature gates after precedence (GA > enabled > disabled > Beta > off). */
  featureGates: ReadonlySet<string>;
  cpuAllocationRatio: number;
  /** Percent; 100 = no overcommit. */
  memoryOvercommit: number;
  /**
   * Label / annotation keys (a trailing `*` matches a prefix) synced VM template → VMI → launcher
   * pod besides KubeVirt's own (virt-controller's `--additional-launcher-labels-sync` /
   * `--additional-launcher-annotations-sync`, not part of the KubeVirt CR): shared/template/dynamic-sync.ts.
   */
  launcherLabelsSync: readonly string[];
  launcherAnnotationsSync: readonly string[];
  /** `additionalGuestMemoryOverheadRatio` as a number, undefined when unset. */
  additionalGuestMemoryOverheadRatio: number | undefined;
  nodeSelectors: Record<string, string>;
  useEmulation: boolean;
  diskMemoryLimitBytes: bigint;
  virtLauncherVerbosity: number;
  defaultArchitecture: string;
  arch: Record<string, ArchSettings>;
  cpuModel: string;
  defaultRuntimeClass: string;
  selinuxLauncherType: string;
  /** Seccomp profile for launcher pods, from `seccompConfiguration.virtualMachineInstanceProfile.customProfile`. */
  seccompProfile: { type: 'Localhost'; localhostProfile: string } | { type: 'RuntimeDefault' } | undefined;
  disableSerialConsoleLog: boolean;
  hypervisor: string;
  supportContainerResources: Record<string, SupportContainerOverride>;
  defaultNetworkInterface: string;
  permitBridgeInterfaceOnPodNetwork: boolean;
  /** `vmRolloutStrategy`: `LiveUpdate` (the default) or `Stage`. */
  vmRolloutStrategy: string;
  /** `liveUpdateConfiguration`, defaulted: the hotplug maxima (reference-vm-vmi-depth §5). */
  liveUpdate: LiveUpdateSettings;
  /** `migrations.matchSELinuxLevelOnMigration`, nil = true. */
  matchSELinuxLevelOnMigration: boolean;
  evictionStrategy: string | undefined;
  /** `spec.configuration.vmStateStorageClass`: the class of backend-storage PVCs ("" = the default class). */
  vmStateStorageClass: string;
  /** `spec.configuration.migrations` with KubeVirt's defaults (reference §d.5); the migration controller reads it. */
  migrations: MigrationSettings;
  /** `spec.configuration.instancetype.referencePolicy` (reference-vm-vmi-depth §1.6), `reference` when unset. */
  instancetypeReferencePolicy: InstancetypeReferencePolicy;
  /** `spec.configuration.changedBlockTrackingLabelSelectors`: the VMs (and namespaces) whose disks track changed blocks. */
  changedBlockTrackingSelectors: ChangedBlockTrackingSelectors;
  /** `spec.configuration.developerConfiguration.minimumClusterTSCFrequency` (Hz), when set: the TSC frequency hint instead of the nodes' lowest. */
  minimumClusterTSCFrequency: number | undefined;
  /**
   * The resource names `permittedHostDevices` allows (PCI, mediated and USB devices), or
   * undefined when the CR sets no `permittedHostDevices`: then any device name is let through.
   */
  permittedHostDevices: ReadonlySet<string> | undefined;
  /** `autoCPULimitNamespaceLabelSelector`: VMIs in namespaces it matches get a CPU limit (undefined: none; an invalid one counts as none, as KubeVirt). */
  autoCpuLimitNamespaceSelector: LabelSelector | undefined;
  /** `network.binding`: the network binding plugins interfaces may name, by name. */
  networkBindings: Record<string, NetworkBindingPlugin>;
  /** The image a hook sidecar without one runs (virt-operator's `SIDECAR_SHIM_IMAGE`: `<registry>/sidecar-shim:<tag>`). */
  sidecarShimImage: string;
}

/** A network binding plugin as the KubeVirt CR configures it (`network.binding.<name>`). */
export interface NetworkBindingPlugin {
  sidecarImage?: string;
  /** `<name>` or `<namespace>/<name>` of the NAD the plugin's CNI runs from. */
  networkAttachmentDefinition?: string;
  /** `device-info`: the sidecar reads the network-info annotation. */
  downwardAPI?: string;
  /** `computeResourceOverhead.requests.memory` in bytes: added to the launcher's memory overhead. */
  memoryOverheadBytes?: bigint;
}

/** How a VM's instance type and preference are kept: pinned revisions, or expanded into the VM's spec. */
export type InstancetypeReferencePolicy = (typeof REFERENCE_POLICY)[keyof typeof REFERENCE_POLICY];
const REFERENCE_POLICIES: readonly string[] = Object.values(REFERENCE_POLICY);

/** `liveUpdateConfiguration` as the hotplug defaults read it. */
export interface LiveUpdateSettings {
  /** `maxCpuSockets`, when set. */
  maxCpuSockets: number | undefined;
  /** `maxGuest` (a quantity string), when set. */
  maxGuest: string | undefined;
  /** `maxHotplugRatio`: 4 when unset, with or without `liveUpdateConfiguration` (KubeVirt's configuration defaults carry one; the CR is merged onto them). */
  maxHotplugRatio: number;
}

/** The cluster-wide migration settings (`migrations` in the KubeVirt CR), defaulted as KubeVirt does. */
export interface MigrationSettings {
  parallelMigrationsPerCluster: number;
  parallelOutboundMigrationsPerNode: number;
  /** Quantity string, `0Mi` = unlimited. */
  bandwidthPerMigration: string;
  completionTimeoutPerGiB: number;
  progressTimeout: number;
  maxDowntimeMs: number;
  allowAutoConverge: boolean;
  allowPostCopy: boolean;
  /** Follows `allowPostCopy` when unset. */
  allowWorkloadDisruption: boolean;
  unsafeMigrationOverride: boolean;
  disableTLS: boolean;
  network: string | undefined;
  utilityVolumesTimeout: number;
  nodeDrainTaintKey: string;
  /**
   * The two settings KubeVirt leaves unset by default and copies into a migration's
   * `migrationConfiguration` only when the CR sets them (nil pointers: absent there).
   */
  declared: { readonly disableTLS?: boolean; readonly matchSELinuxLevelOnMigration?: boolean };
}

/** Is a feature gate on in this config? */
export function gateEnabled(config: ClusterConfig, gate: string): boolean {
  return config.featureGates.has(gate);
}

function resolveGates(enabled: readonly string[], disabled: readonly string[]): Set<string> {
  const on = new Set<string>(GA_GATES);
  const off = new Set(disabled);
  for (const g of enabled) on.add(g);
  for (const g of BETA_ON_GATES) if (!off.has(g)) on.add(g);
  for (const g of off) if (!GA_GATES.has(g) && !enabled.includes(g)) on.delete(g);
  return on;
}

function positive(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new InvalidInputError(field, `must be > 0, got ${value}`);
  return value;
}

function supportResources(cfg: KubeVirtConfiguration): Record<string, SupportContainerOverride> {
  const out: Record<string, SupportContainerOverride> = {};
  (cfg.supportContainerResources ?? []).forEach((s, i) => {
    const at = `spec.configuration.supportContainerResources[${i}].resources`;
    const conv = (m: Record<string, string | number> | undefined, kind: string) =>
      Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, parseQuantity(v, `${at}.${kind}.${k}`)]));
    out[s.type] = { requests: conv(s.resources.requests, 'requests'), limits: conv(s.resources.limits, 'limits') };
  });
  return out;
}

/**
 * Resolves the template service's configuration from a KubeVirt CR. With no CR (or an empty
 * one) the result is KubeVirt's defaults: cpuAllocationRatio 10, memoryOvercommit 100,
 * ImageVolume on, non-root launchers, amd64 / q35, launcher image
 * `quay.io/kubevirt/virt-launcher:v1.9.0` (`spec.imageRegistry` / `spec.imageTag` override it,
 * `launcherImage` overrides everything, as virt-controller's `--launcher-image` flag does).
 */
/** What a deployment sets besides the KubeVirt CR (virt-controller's flags). */
export interface ClusterConfigOverrides {
  launcherImage?: string;
  imagePullSecret?: string;
  additionalLauncherLabelsSync?: readonly string[];
  additionalLauncherAnnotationsSync?: readonly string[];
}

/**
 * The `additional*Sync` lists from the environment (`ADDITIONAL_LAUNCHER_LABELS_SYNC`,
 * `ADDITIONAL_LAUNCHER_ANNOTATIONS_SYNC`: comma-separated keys, as virt-controller's flags take them).
 */
export function syncOverridesFromEnv(env: NodeJS.ProcessEnv = process.env): ClusterConfigOverrides {
  const list = (v: string | undefined) => (v ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
  return { additionalLauncherLabelsSync: list(env.ADDITIONAL_LAUNCHER_LABELS_SYNC), additionalLauncherAnnotationsSync: list(env.ADDITIONAL_LAUNCHER_ANNOTATIONS_SYNC) };
}

export function clusterConfigFromKubeVirt(kv?: KubeVirt, overrides: ClusterConfigOverrides = {}): ClusterConfig {
  const spec = kv?.spec;
  const cfg: KubeVirtConfiguration = spec?.configuration ?? {};
  const dev = cfg.developerConfiguration ?? {};
  const field = (f: string) => `spec.configuration.${f}`;

  let ratio: number | undefined;
  if (cfg.additionalGuestMemoryOverheadRatio !== undefined) {
    ratio = Number(cfg.additionalGuestMemoryOverheadRatio);
    if (!Number.isFinite(ratio) || ratio < 1) {
      throw new InvalidInputError(field('additionalGuestMemoryOverheadRatio'), `must be a number >= 1, got '${cfg.additionalGuestMemoryOverheadRatio}'`);
    }
  }
  const pullPolicy = cfg.imagePullPolicy ?? 'IfNotPresent';
  if (!['Always', 'IfNotPresent', 'Never'].includes(pullPolicy)) {
    throw new InvalidInputError(field('imagePullPolicy'), `must be Always, IfNotPresent or Never, got '${String(pullPolicy)}'`);
  }
  const netIface = cfg.network?.defaultNetworkInterface ?? 'bridge';
  if (!['', 'bridge', 'slirp', 'masquerade'].includes(netIface)) {
    throw new InvalidInputError(field('network.defaultNetworkInterface'), `must be bridge, masquerade or slirp, got '${netIface}'`);
  }
  // The CRD's enum keeps other values out of a real cluster; anything else here is refused like any bad field.
  const referencePolicy = cfg.instancetype?.referencePolicy ?? 'reference';
  if (!REFERENCE_POLICIES.includes(referencePolicy)) {
    throw new InvalidInputError(field('instancetype.referencePolicy'), `must be reference, expand or expandAll, got '${referencePolicy}'`);
  }
  const archCfg = cfg.architectureConfiguration;
  const arch: Record<string, ArchSettings> = {
    amd64: { machineType: archCfg?.amd64?.machineType ?? cfg.machineType ?? 'q35', ovmfPath: archCfg?.amd64?.ovmfPath ?? cfg.ovmfPath ?? '/usr/share/edk2/ovmf' },
    arm64: { machineType: archCfg?.arm64?.machineType ?? 'virt', ovmfPath: archCfg?.arm64?.ovmfPath ?? '/usr/share/AAVMF' },
    s390x: { machineType: archCfg?.s390x?.machineType ?? 's390-ccw-virtio', ovmfPath: archCfg?.s390x?.ovmfPath ?? '' },
  };
  const custom = cfg.seccompConfiguration?.virtualMachineInstanceProfile?.customProfile;
  const seccompProfile = custom?.localhostProfile
    ? { type: 'Localhost' as const, localhostProfile: custom.localhostProfile }
    : custom?.runtimeDefaultProfile ? { type: 'RuntimeDefault' as const } : undefined;
  const registry = spec?.imageRegistry || DEFAULT_IMAGE_REGISTRY;
  const tag = spec?.imageTag || DEFAULT_IMAGE_TAG;

  return {
    launcherImage: overrides.launcherImage ?? `${registry}/virt-launcher:${tag}`,
    imagePullPolicy: pullPolicy,
    imagePullSecret: overrides.imagePullSecret ?? '',
    featureGates: resolveGates(dev.featureGates ?? [], dev.disabledFeatureGates ?? []),
    cpuAllocationRatio: positive(field('developerConfiguration.cpuAllocationRatio'), dev.cpuAllocationRatio, 10),
    memoryOvercommit: positive(field('developerConfiguration.memoryOvercommit'), dev.memoryOvercommit, 100),
    additionalGuestMemoryOverheadRatio: ratio,
    launcherLabelsSync: [...(overrides.additionalLauncherLabelsSync ?? [])],
    launcherAnnotationsSync: [...(overrides.additionalLauncherAnnotationsSync ?? [])],
    nodeSelectors: { ...(dev.nodeSelectors ?? {}) },
    useEmulation: dev.useEmulation ?? false,
    diskMemoryLimitBytes: dev.diskVerification
      ? quantityValue(parseQuantity(dev.diskVerification.memoryLimit, field('developerConfiguration.diskVerification.memoryLimit')))
      : 2097152000n,
    virtLauncherVerbosity: dev.logVerbosity?.virtLauncher ?? 2,
    defaultArchitecture: archCfg?.defaultArchitecture || 'amd64',
    arch,
    cpuModel: cfg.cpuModel ?? '',
    defaultRuntimeClass: cfg.defaultRuntimeClass ?? '',
    selinuxLauncherType: cfg.selinuxLauncherType ?? '',
    seccompProfile,
    disableSerialConsoleLog: cfg.virtualMachineOptions?.disableSerialConsoleLog !== undefined,
    hypervisor: cfg.hypervisors?.[0]?.name || 'kvm',
    supportContainerResources: supportResources(cfg),
    defaultNetworkInterface: netIface || 'bridge',
    permitBridgeInterfaceOnPodNetwork: cfg.network?.permitBridgeInterfaceOnPodNetwork ?? true,
    vmRolloutStrategy: cfg.vmRolloutStrategy ?? 'LiveUpdate',
    liveUpdate: {
      maxCpuSockets: cfg.liveUpdateConfiguration?.maxCpuSockets,
      maxGuest: cfg.liveUpdateConfiguration?.maxGuest === undefined ? undefined : String(cfg.liveUpdateConfiguration.maxGuest),
      maxHotplugRatio: cfg.liveUpdateConfiguration?.maxHotplugRatio || 4,
    },
    matchSELinuxLevelOnMigration: cfg.migrations?.matchSELinuxLevelOnMigration ?? true,
    evictionStrategy: cfg.evictionStrategy,
    vmStateStorageClass: cfg.vmStateStorageClass ?? '',
    migrations: migrationSettings(cfg),
    instancetypeReferencePolicy: referencePolicy as InstancetypeReferencePolicy,
    changedBlockTrackingSelectors: { ...(cfg.changedBlockTrackingLabelSelectors ?? {}) },
    minimumClusterTSCFrequency: dev.minimumClusterTSCFrequency,
    permittedHostDevices: cfg.permittedHostDevices
      ? new Set([...(cfg.permittedHostDevices.pciHostDevices ?? []), ...(cfg.permittedHostDevices.mediatedDevices ?? []), ...(cfg.permittedHostDevices.usb ?? [])].map((d) => d.resourceName))
      : undefined,
    autoCpuLimitNamespaceSelector: validSelectorOrNone(cfg.autoCPULimitNamespaceLabelSelector),
    networkBindings: networkBindings(cfg),
    sidecarShimImage: `${registry}/sidecar-shim:${tag}`,
  };
}

function networkBindings(cfg: KubeVirtConfiguration): Record<string, NetworkBindingPlugin> {
  const out: Record<string, NetworkBindingPlugin> = {};
  for (const [name, p] of Object.entries(cfg.network?.binding ?? {})) {
    const memory = p.computeResourceOverhead?.requests?.['memory'];
    out[name] = {
      ...(p.sidecarImage ? { sidecarImage: p.sidecarImage } : {}),
      ...(p.networkAttachmentDefinition ? { networkAttachmentDefinition: p.networkAttachmentDefinition } : {}),
      ...(p.downwardAPI ? { downwardAPI: p.downwardAPI } : {}),
      ...(memory !== undefined ? { memoryOverheadBytes: quantityValue(parseQuantity(memory, `spec.configuration.network.binding.${name}.computeResourceOverhead.requests.memory`)) } : {}),
    };
  }
  return out;
}

function validSelectorOrNone(selector: LabelSelector | undefined): LabelSelector | undefined {
  if (!selector) return undefined;
  try {
    validateSelector(selector, 'spec.configuration.autoCPULimitNamespaceLabelSelector');
    return selector;
  } catch {
    return undefined;
  }
}

function migrationSettings(cfg: KubeVirtConfiguration): MigrationSettings {
  const m = cfg.migrations ?? {};
  const at = (f: string) => `spec.configuration.migrations.${f}`;
  const allowPostCopy = m.allowPostCopy ?? false;
  return {
    parallelMigrationsPerCluster: positive(at('parallelMigrationsPerCluster'), m.parallelMigrationsPerCluster, 5),
    parallelOutboundMigrationsPerNode: positive(at('parallelOutboundMigrationsPerNode'), m.parallelOutboundMigrationsPerNode, 2),
    bandwidthPerMigration: m.bandwidthPerMigration === undefined ? '0Mi' : String(m.bandwidthPerMigration),
    completionTimeoutPerGiB: m.completionTimeoutPerGiB ?? 150,
    progressTimeout: m.progressTimeout ?? 150,
    maxDowntimeMs: m.maxDowntimeMs ?? 900,
    allowAutoConverge: m.allowAutoConverge ?? false,
    allowPostCopy,
    allowWorkloadDisruption: m.allowWorkloadDisruption ?? allowPostCopy,
    unsafeMigrationOverride: m.unsafeMigrationOverride ?? false,
    disableTLS: m.disableTLS ?? false,
    network: m.network,
    utilityVolumesTimeout: m.utilityVolumesTimeout ?? 150,
    nodeDrainTaintKey: m.nodeDrainTaintKey ?? 'kubevirt.io/drain',
    declared: {
      ...(m.disableTLS !== undefined ? { disableTLS: m.disableTLS } : {}),
      ...(m.matchSELinuxLevelOnMigration !== undefined ? { matchSELinuxLevelOnMigration: m.matchSELinuxLevelOnMigration } : {}),
    },
  };
}

/** Settings for an architecture, falling back to amd64's for unknown ones. */
export function archSettings(config: ClusterConfig, arch: string | undefined): ArchSettings {
  const a = arch || config.defaultArchitecture;
  return config.arch[a] ?? config.arch['amd64'] ?? { machineType: 'q35', ovmfPath: '/usr/share/edk2/ovmf' };
}
