/**
 * virt-handler's migratability verdicts, as pure functions of the VMI, the cluster configuration
 * and the node (KubeVirt `pkg/virt-handler/vm.go`: `calculateLiveMigrationCondition`,
 * `calculateLiveStorageMigrationCondition`, `checkVolumesForMigration`,
 * `updateLiveMigrationConditions`; `pkg/network/vmispec/interface.go` `VerifyVMIMigratable`;
 * `pkg/virt-controller/watch/topology/tsc.go` `GetTscFrequencyRequirement`). The handler
 * recomputes both conditions on every status update of a VMI it owns, `Scheduled` included, from
 * the spec and `status.volumeStatus` only: a VMI whose claims carry no `persistentVolumeClaimInfo`
 * is not migratable, whatever its claims are.
 */
import type { Condition, Vmi } from './objects.ts';

/** The KubeVirt CR configuration fields the verdicts read. */
export interface HandlerConfig {
  /** `developerConfiguration.useEmulation`. */
  useEmulation: boolean;
  featureGates: readonly string[];
  /** `network.binding`: plugin name → whether its config has a `migration` stanza. */
  migratableBindings: ReadonlySet<string>;
  /** `permittedHostDevices.mediatedDevices[].resourceName`. */
  mediatedDevices: ReadonlySet<string>;
}

export const DEFAULT_HANDLER_CONFIG: HandlerConfig = { useEmulation: false, featureGates: [], migratableBindings: new Set(), mediatedDevices: new Set() };

/** The annotation that lets a bridge-bound pod network migrate. */
export const ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION = 'kubevirt.io/allow-pod-bridge-network-live-migration';

const INTERFACE_MESSAGE = 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network';
const TSC_MESSAGE = 'HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent';
const unknownShared = (claim: string) => `cannot migrate VMI: Unable to determine if PVC ${claim} is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;
const notShared = (claim: string) => `cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;

type AnyMap = Record<string, unknown>;
const obj = (v: unknown): AnyMap | undefined => (typeof v === 'object' && v !== null ? (v as AnyMap) : undefined);
const list = (v: unknown): AnyMap[] => (Array.isArray(v) ? v.filter((x): x is AnyMap => obj(x) !== undefined) : []);

interface VolumeStatusView {
  name: string;
  persistentVolumeClaimInfo?: { claimName?: string; accessModes?: string[]; volumeMode?: string };
}

function domainOf(vmi: Vmi): AnyMap {
  return (obj(vmi.spec?.domain) ?? {}) as AnyMap;
}
function devicesOf(vmi: Vmi): AnyMap {
  return obj(domainOf(vmi)['devices']) ?? {};
}
export function volumeStatusOf(vmi: Vmi): VolumeStatusView[] {
  return (vmi.status?.['volumeStatus'] as VolumeStatusView[] | undefined) ?? [];
}

/** `VerifyVMIMigratable`: the pod-network interface must be masquerade, passt, an allowed bridge or a migratable plugin. */
export function interfaceError(vmi: Vmi, config: HandlerConfig): string | undefined {
  const ifaces = list(devicesOf(vmi)['interfaces']);
  if (ifaces.length === 0) return undefined;
  const podNetwork = list((vmi.spec as AnyMap | undefined)?.['networks']).find((n) => obj(n['pod']) !== undefined);
  if (!podNetwork) return undefined;
  const primary = ifaces.find((i) => i['name'] === podNetwork['name']);
  if (!primary) return `no primary interface found for network ${String(podNetwork['name'])}`;
  if (primary['masquerade'] !== undefined || primary['passtBinding'] !== undefined) return undefined;
  if (primary['bridge'] !== undefined && vmi.metadata?.annotations?.[ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION] !== undefined) return undefined;
  const binding = obj(primary['binding']);
  if (binding && config.migratableBindings.has(String(binding['name']))) return undefined;
  return INTERFACE_MESSAGE;
}

/** `isHostModelMigratable`: a host-model CPU needs the node labeller to have found the host model. */
export function hostModelError(vmi: Vmi, nodeLabels: Record<string, string> | undefined): string | undefined {
  const cpu = obj(domainOf(vmi)['cpu']);
  if (cpu?.['model'] !== 'host-model') return undefined;
  const hasModel = Object.keys(nodeLabels ?? {}).some((k) => k.startsWith('host-model-cpu.node.kubevirt.io/'));
  return hasModel ? undefined : `the node "${vmi.status?.nodeName ?? ''}" does not allow migration with host-model`;
}

/** `vmiContainsNonMigratablePCIHostDevices`. */
export function hostDeviceError(vmi: Vmi, config: HandlerConfig): string | undefined {
  const devices = devicesOf(vmi);
  if (list(devices['hostDevices']).length > 0) return 'VMI specifies non-migratable generic PCI host device';
  const gpus = list(devices['gpus']);
  if (gpus.length > 1) return 'VMI specifies too many GPUs';
  if (gpus.length === 1 && !config.featureGates.includes('VGPULiveMigration')) return 'VMI specifies a GPU but feature gate VGPULiveMigration is not enabled';
  if (gpus.length === 1 && !config.mediatedDevices.has(String(gpus[0]!['deviceName']))) return 'VMI specifies non-migratable GPU device';
  return undefined;
}

function launchSecurity(vmi: Vmi): AnyMap | undefined {
  return obj(domainOf(vmi)['launchSecurity']);
}

/** SEV/SNP or TDX: `[reason, message]`. */
export function confidentialError(vmi: Vmi): [string, string] | undefined {
  const ls = launchSecurity(vmi);
  if (ls && (ls['sev'] !== undefined || ls['snp'] !== undefined)) return ['SEVNotLiveMigratable', 'VMI uses SEV'];
  if (ls && ls['tdx'] !== undefined) return ['TDXNotLiveMigratable', 'VMI uses TDX'];
  return undefined;
}

/** `GetTscFrequencyRequirement` = RequiredForMigration and no `topologyHints.tscFrequency`. */
export function tscError(vmi: Vmi): string | undefined {
  const cpu = obj(domainOf(vmi)['cpu']);
  const invtsc = list(cpu?.['features']).some((f) => f['name'] === 'invtsc' && (f['policy'] === 'require' || f['policy'] === 'force'));
  if (invtsc) return undefined;
  const hyperv = obj(obj(domainOf(vmi)['features'])?.['hyperv']);
  const reenlightenment = obj(hyperv?.['reenlightenment'])?.['enabled'] === true;
  if (!reenlightenment) return undefined;
  const hints = obj(vmi.status?.['topologyHints']);
  const freq = Number(hints?.['tscFrequency'] ?? 0);
  return freq > 0 ? undefined : TSC_MESSAGE;
}

function hypervPassthrough(vmi: Vmi): boolean {
  return obj(obj(domainOf(vmi)['features'])?.['hypervPassthrough'])?.['enabled'] === true;
}

/** `HasVMIPersistentReservation`: a `lun` disk with `reservation: true`. */
export function hasPersistentReservation(vmi: Vmi): boolean {
  return list(devicesOf(vmi)['disks']).some((d) => obj(d['lun'])?.['reservation'] === true);
}

function migratedVolumeNames(vmi: Vmi): Set<string> {
  return new Set(list(vmi.status?.['migratedVolumes']).map((m) => String(m['volumeName'] ?? '')));
}

/**
 * `checkVolumesForMigration`: whether the migration must copy disks (block migration), and the
 * first volume that forbids migrating at all. Only `spec.volumes` are looked at.
 */
export function volumeVerdict(vmi: Vmi): { block: boolean; error?: string } {
  const statuses = new Map(volumeStatusOf(vmi).map((s) => [s.name, s]));
  const migrated = migratedVolumeNames(vmi);
  let block = migrated.size > 0;
  const devices = devicesOf(vmi);
  const filesystems = new Set(list(devices['filesystems']).map((f) => String(f['name'])));
  const disks = list(devices['disks']);
  const shared = (modes: string[] | undefined) => (modes ?? []).includes('ReadWriteMany');
  for (const v of vmi.spec?.volumes ?? []) {
    const pvc = obj(v['persistentVolumeClaim']);
    const dv = obj(v['dataVolume']);
    const hostDisk = obj(v['hostDisk']);
    if (pvc || dv) {
      const claim = String(pvc ? pvc['claimName'] : dv!['name']);
      const info = statuses.get(v.name)?.persistentVolumeClaimInfo;
      if (!info) return { block: true, error: unknownShared(claim) };
      if (!shared(info.accessModes) && !migrated.has(v.name)) return { block: true, error: notShared(claim) };
    } else if (hostDisk) {
      const info = statuses.get(v.name)?.persistentVolumeClaimInfo;
      if (info) {
        if (!shared(info.accessModes) && !migrated.has(v.name)) return { block: true, error: notShared(info.claimName ?? '') };
        continue;
      }
      if (hostDisk['shared'] !== true) return { block: true, error: 'cannot migrate VMI with non-shared HostDisk' };
    } else {
      if (filesystems.has(v.name)) continue;
      // A read-only CD-ROM (readonly unset or true) is not copied; any other local volume is.
      const readOnlyCdrom = disks.some((d) => d['name'] === v.name && obj(d['cdrom']) !== undefined && obj(d['cdrom'])!['readonly'] !== false);
      if (readOnlyCdrom) continue;
      block = true;
    }
  }
  return { block };
}

/** The condition as virt-handler writes it: no timestamps (Go's zero time is `null` on the wire). */
function verdict(type: string, status: 'True' | 'False', reason?: string, message?: string): Condition {
  return { type, status, ...(reason !== undefined ? { reason } : {}), ...(message !== undefined ? { message } : {}), lastProbeTime: null, lastTransitionTime: null } as unknown as Condition;
}

export interface MigratabilityInput {
  vmi: Vmi;
  config: HandlerConfig;
  /** The labels of the node the VMI runs on (the node labeller's host model). */
  nodeLabels: Record<string, string> | undefined;
}

/** `LiveMigratable` and whether a migration is a block migration. First failing rule wins. */
export function liveMigratable(input: MigratabilityInput): { condition: Condition; block: boolean } {
  const { vmi, config } = input;
  const volumes = volumeVerdict(vmi);
  const no = (reason: string, message: string) => ({ condition: verdict('LiveMigratable', 'False', reason, message), block: volumes.block });
  const iface = interfaceError(vmi, config);
  if (iface) return no('InterfaceNotLiveMigratable', iface);
  const host = hostModelError(vmi, input.nodeLabels);
  if (host) return no('CPUModeLiveMigratable', host);
  const dev = hostDeviceError(vmi, config);
  if (dev) return no('HostDeviceNotLiveMigratable', dev);
  const conf = confidentialError(vmi);
  if (conf) return no(conf[0], conf[1]);
  const arch = (vmi.spec as AnyMap | undefined)?.['architecture'];
  if (launchSecurity(vmi) && arch === 's390x') return no('SecureExecutionNotLiveMigratable', 'VMI uses Secure Execution');
  const tsc = tscError(vmi);
  if (tsc) return no('NoTSCFrequencyNotLiveMigratable', tsc);
  if (hypervPassthrough(vmi)) return no('HypervPassthroughNotLiveMigratable', 'VMI uses hyperv passthrough');
  if (volumes.error) return no('DisksNotLiveMigratable', volumes.error);
  return { condition: verdict('LiveMigratable', 'True'), block: volumes.block };
}

/** `StorageLiveMigratable`: every failing rule, joined (volumes are not looked at, persistent reservation is). */
export function storageLiveMigratable(input: MigratabilityInput): Condition {
  const { vmi, config } = input;
  const failures: string[] = [];
  const add = (reason: string, message: string | undefined) => {
    if (message) failures.push(`${reason}: ${message}`);
  };
  add('InterfaceNotLiveMigratable', interfaceError(vmi, config));
  add('CPUModeLiveMigratable', hostModelError(vmi, input.nodeLabels));
  add('HostDeviceNotLiveMigratable', hostDeviceError(vmi, config));
  const conf = confidentialError(vmi);
  if (conf) add(conf[0], conf[1]);
  if (hasPersistentReservation(vmi)) add('PersistentReservationNotLiveMigratable', 'VMI uses SCSI persistent reservation');
  add('NoTSCFrequencyNotLiveMigratable', tscError(vmi));
  if (hypervPassthrough(vmi)) add('HypervPassthroughNotLiveMigratable', 'VMI uses hyperv passthrough');
  return failures.length === 0 ? verdict('StorageLiveMigratable', 'True') : verdict('StorageLiveMigratable', 'False', 'NotMigratable', failures.join(', '));
}

/**
 * The conditions list with both verdicts applied as virt-handler applies them: `LiveMigratable`
 * replaced whenever any field differs; `StorageLiveMigratable` only when its status or reason
 * changes (KubeVirt's `UpdateCondition`, so its message may be stale).
 */
export function withMigratability(conditions: readonly Condition[], live: Condition, storage: Condition): Condition[] {
  const same = (a: Condition, b: Condition, message: boolean) => a.status === b.status && (a.reason ?? '') === (b.reason ?? '') && (!message || (a.message ?? '') === (b.message ?? ''));
  const out = [...conditions];
  // In place (or appended): a list that only moved would be a write every time.
  const put = (next: Condition, message: boolean) => {
    const i = out.findIndex((c) => c.type === next.type);
    if (i < 0) out.push(next);
    else if (!same(out[i]!, next, message)) out[i] = next;
  };
  put(live, true);
  put(storage, false);
  return out;
}

/** The KubeVirt CR's configuration as the verdicts read it. */
export function handlerConfigOf(kubevirt: { spec?: { configuration?: AnyMap } } | undefined): HandlerConfig {
  const conf = kubevirt?.spec?.configuration ?? {};
  const dev = obj(conf['developerConfiguration']) ?? {};
  const bindings = obj(obj(conf['network'])?.['binding']) ?? {};
  const mdevs = list(obj(conf['permittedHostDevices'])?.['mediatedDevices']);
  return {
    useEmulation: dev['useEmulation'] === true,
    featureGates: Array.isArray(dev['featureGates']) ? (dev['featureGates'] as string[]) : [],
    migratableBindings: new Set(Object.entries(bindings).filter(([, b]) => obj(b)?.['migration'] !== undefined).map(([n]) => n)),
    mediatedDevices: new Set(mdevs.map((m) => String(m['resourceName']))),
  };
}
