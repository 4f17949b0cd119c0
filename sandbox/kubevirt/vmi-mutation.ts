/**
 * virt-api's VirtualMachineInstance mutating webhook on CREATE (KubeVirt
 * `pkg/virt-api/webhooks/mutating-webhook/mutators/vmi-mutator.go`, the defaults of
 * `pkg/defaults/` and the API's generated object defaults), as a pure step the sandbox applies to
 * every VMI created on either lane (vmi-mutation-webhook.ts on the emulator, the HTTPS webhook on
 * the real lane). On a KubeVirt cluster no controller ever sees a VMI without these; the sandbox
 * runs no virt-api, so this stands in for it (a stand-in, not the product: the product's
 * controllers must not apply any of it themselves).
 *
 * Applied, in KubeVirt's order: the spec defaults (architecture, machine type, a cpu request from
 * a lone cpu limit or the CR's `cpuRequest`, guest memory, CPU topology, containerDisk pull
 * policies, eviction strategy, the default pod network and interface, a disk for every volume) —
 * shared/template/vmi-defaults.ts, which KubeVirt's corpus checks; the object defaults (a random
 * firmware UUID, `features.acpi`, enabled feature and timer states, spinlock retries, disk device
 * and CD-ROM defaults, input bus/type, probe thresholds); Hyper-V feature dependencies; the
 * per-architecture disk bus, watchdog action, arm64 CPU model and EFI; the CPU model (the CR's, else
 * `host-model`); the memory and CPU topology status; the hotplug maxima under LiveUpdate; the PCI
 * topology annotation; the emulator-thread parity and TDX quote-generation socket annotations; `runtimeUser` 107 unless the Root
 * gate is on; the foreground-delete finalizer (appended, as KubeVirt does, even when present);
 * phase Pending with its transition time.
 *
 * The result is what KubeVirt's JSON patch stores: its quantities canonical, `guestOSInfo: {}` and
 * `runtimeUser` written as Go writes them (neither is omitted when empty).
 *
 * Not applied: VirtualMachineInstancePresets (deprecated; the sandbox serves none), Go's dropping
 * of fields its types do not know (the API server prunes by the CRD schema), and the UPDATE rule that reverts status changes by
 * identities that are not KubeVirt's service accounts (docs/fidelity.md, R-L1).
 */
import { randomUUID } from 'node:crypto';
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../shared/api/index.ts';
import { NON_ROOT_UID, VMI_FINALIZER } from '../../shared/api/well-known.ts';
import { clusterConfigFromKubeVirt, gateEnabled, type ClusterConfig } from '../../shared/config/cluster-config.ts';
import { canonicalQuantity } from '../../shared/api/quantity.ts';
import { applyHotplugDefaults } from '../../shared/liveupdate/defaults.ts';
import { applyVmiDefaults } from '../../shared/template/vmi-defaults.ts';

/** KubeVirt's annotation names the mutator writes. */
export const PCI_TOPOLOGY_VERSION_ANNOTATION = 'kubevirt.io/pci-topology-version';
export const EMULATOR_THREAD_PARITY_ANNOTATION = 'alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity';
export const QGS_SOCKET_PATH_ANNOTATION = 'kubevirt.io/qgs-socket-path';
/** KubeVirt's default TDX quote-generation socket. */
const DEFAULT_QGS_SOCKET_PATH = '/var/run/tdx-qgs/qgs.socket';

type Json = Record<string, unknown>;

export interface MutationContext {
  /** The cluster's KubeVirt CR (undefined: none, KubeVirt's defaults). */
  kubevirt: KubeVirt | undefined;
  /** RFC 3339 time of the create (the Pending transition). */
  now: string;
  /** A new random UUID (the firmware UUID of a VMI that names none). */
  newUuid?: () => string;
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const child = (parent: Json, key: string): Json => (isObj(parent[key]) ? (parent[key] as Json) : ((parent[key] = {}) as Json));

/** A FeatureState-shaped member, if present: `enabled` defaults to true. */
function enableIfUnset(state: unknown): void {
  if (isObj(state) && state['enabled'] === undefined) state['enabled'] = true;
}

/** The API's generated object defaults for the VMI (SetObjectDefaults_VirtualMachineInstance). */
function objectDefaults(spec: Json, newUuid: () => string): void {
  const domain = child(spec, 'domain');
  // s390x has no ACPI: off unless the VMI says (setS390xDefaultFeatures, before the object defaults).
  if (spec['architecture'] === 's390x') {
    const acpi = child(child(domain, 'features'), 'acpi');
    if (acpi['enabled'] === undefined) acpi['enabled'] = false;
  }
  const firmware = child(domain, 'firmware');
  if (!firmware['uuid']) firmware['uuid'] = newUuid();
  const features = child(domain, 'features');
  // ACPI is a value, not a pointer, in KubeVirt's type: always there, enabled unless said otherwise.
  enableIfUnset(child(features, 'acpi'));
  if (isObj(features['apic'])) enableIfUnset(features['apic']);
  const hyperv = features['hyperv'];
  if (isObj(hyperv)) {
    for (const k of ['relaxed', 'vapic', 'vpindex', 'runtime', 'synic', 'reset', 'vendorid', 'frequencies', 'reenlightenment', 'ipi', 'evmcs', 'tlbflush', 'synictimer']) enableIfUnset(hyperv[k]);
    const spinlocks = hyperv['spinlocks'];
    if (isObj(spinlocks)) {
      enableIfUnset(spinlocks);
      if (spinlocks['enabled'] === true && spinlocks['spinlocks'] === undefined) spinlocks['spinlocks'] = 4096;
    }
    const synictimer = hyperv['synictimer'];
    if (isObj(synictimer)) enableIfUnset(synictimer['direct']);
    const tlbflush = hyperv['tlbflush'];
    if (isObj(tlbflush)) {
      enableIfUnset(tlbflush['direct']);
      enableIfUnset(tlbflush['extended']);
    }
  }
  enableIfUnset(features['smm']);
  enableIfUnset(features['pvspinlock']);
  const timer = isObj(domain['clock']) ? (domain['clock'] as Json)['timer'] : undefined;
  // A timer's state is `present` in the API, not `enabled`.
  if (isObj(timer)) {
    for (const k of ['hpet', 'kvm', 'pit', 'rtc', 'hyperv']) {
      const t = timer[k];
      if (isObj(t) && t['present'] === undefined) t['present'] = true;
    }
  }
  const devices = child(domain, 'devices');
  for (const disk of (devices['disks'] as Json[] | undefined) ?? []) {
    if (disk['disk'] === undefined && disk['cdrom'] === undefined && disk['lun'] === undefined) disk['disk'] = {};
    const cdrom = disk['cdrom'];
    if (isObj(cdrom)) {
      cdrom['readonly'] ??= true;
      if (!cdrom['tray']) cdrom['tray'] = 'closed';
    }
    if (isObj(disk['blockSize'])) enableIfUnset((disk['blockSize'] as Json)['matchVolume']);
  }
  // Go writes a hostDisk's capacity (a Quantity value) even when unset.
  for (const volume of (spec['volumes'] as Json[] | undefined) ?? []) {
    if (isObj(volume['hostDisk']) && (volume['hostDisk'] as Json)['capacity'] === undefined) (volume['hostDisk'] as Json)['capacity'] = '0';
  }
  for (const gpu of (devices['gpus'] as Json[] | undefined) ?? []) {
    const display = isObj(gpu['virtualGPUOptions']) ? (gpu['virtualGPUOptions'] as Json)['display'] : undefined;
    if (isObj(display)) enableIfUnset(display['ramFB']);
  }
  for (const input of (devices['inputs'] as Json[] | undefined) ?? []) {
    if (!input['bus']) input['bus'] = 'usb';
    if (!input['type']) input['type'] = 'tablet';
  }
  for (const k of ['livenessProbe', 'readinessProbe']) {
    const probe = spec[k];
    if (!isObj(probe)) continue;
    const floor = (f: string, v: number) => {
      if (typeof probe[f] !== 'number' || (probe[f] as number) < 1) probe[f] = v;
    };
    floor('timeoutSeconds', 1);
    floor('periodSeconds', 10);
    floor('successThreshold', 1);
    floor('failureThreshold', 3);
  }
}

const featureOn = (s: unknown) => isObj(s) && s['enabled'] === true;
const featureMissing = (s: unknown) => !isObj(s) || s['enabled'] === undefined;

/**
 * KubeVirt's best-effort Hyper-V dependencies: an enabled feature whose requirement the user left
 * unset gets it enabled (synic → vpindex, synictimer → synic, tlbflush/ipi → vpindex, evmcs →
 * vapic); a requirement the user disabled is left for the validating webhook. An enabled EVMCS
 * also requires the `vmx` CPU feature.
 */
function hypervDependencies(spec: Json): void {
  const features = isObj(spec['domain']) ? (spec['domain'] as Json)['features'] : undefined;
  const hyperv = isObj(features) ? features['hyperv'] : undefined;
  if (!isObj(hyperv)) return;
  // Leaves first, as KubeVirt walks them; the first disabled requirement stops the walk.
  const rules: [string, string][] = [['evmcs', 'vapic'], ['ipi', 'vpindex'], ['tlbflush', 'vpindex'], ['synictimer', 'synic'], ['synic', 'vpindex']];
  for (const [feature, requires] of rules) {
    if (!featureOn(hyperv[feature])) continue;
    if (featureMissing(hyperv[requires])) {
      hyperv[requires] = { ...(isObj(hyperv[requires]) ? hyperv[requires] : {}), enabled: true };
      continue;
    }
    if (!featureOn(hyperv[requires])) return;
  }
  const evmcs = hyperv['evmcs'];
  if (isObj(evmcs) && evmcs['enabled'] !== false) {
    const cpu = child(child(spec, 'domain'), 'cpu');
    const list = ((cpu['features'] as Json[] | undefined) ??= []);
    const vmx = list.find((f) => f['name'] === 'vmx');
    if (vmx) vmx['policy'] = 'require';
    else list.push({ name: 'vmx', policy: 'require' });
  }
}

/** The per-architecture defaults (disk bus, watchdog action, arm64's CPU model and EFI, s390x's ACPI off). */
function architectureDefaults(spec: Json): void {
  const arch = spec['architecture'];
  const domain = child(spec, 'domain');
  const devices = child(domain, 'devices');
  if (arch === 'arm64') {
    const cpu = child(domain, 'cpu');
    if (!cpu['model']) cpu['model'] = 'host-passthrough';
    const firmware = child(domain, 'firmware');
    if (!isObj(firmware['bootloader'])) firmware['bootloader'] = { efi: {} };
    const efi = (firmware['bootloader'] as Json)['efi'];
    if (isObj(efi) && efi['secureBoot'] === undefined) efi['secureBoot'] = false;
  }
  // q35 has no IDE: SATA on amd64; virtio where SATA is not supported.
  const bus = arch === 'arm64' || arch === 's390x' ? 'virtio' : 'sata';
  for (const disk of (devices['disks'] as Json[] | undefined) ?? []) {
    for (const k of ['disk', 'cdrom', 'lun']) {
      const target = disk[k];
      if (isObj(target) && !target['bus']) target['bus'] = bus;
    }
  }
  const watchdog = devices['watchdog'];
  if (isObj(watchdog) && arch !== 'arm64') {
    const model = child(watchdog, arch === 's390x' ? 'diag288' : 'i6300esb');
    if (!model['action']) model['action'] = 'reset';
  }
}

/** KubeVirt's `SupportsPCIeHotplug`: amd64/arm64 on a q35 or `virt` machine. */
export function supportsPcieHotplug(spec: VirtualMachineInstanceSpec): boolean {
  if (!['amd64', 'arm64', '', undefined].includes(spec.architecture)) return false;
  const type = spec.domain.machine?.type;
  return type === undefined || type.includes('q35') || type.startsWith('virt');
}

/** Quantities as Go writes them back (`131072Ki` → `128Mi`): the resources, the guest memory and its status. */
function canonicalQuantities(vmi: VirtualMachineInstance): void {
  const canon = (map: Record<string, unknown> | undefined, field: string) => {
    if (!map) return;
    for (const [k, v] of Object.entries(map)) if (typeof v === 'string' || typeof v === 'number') map[k] = canonicalQuantity(v, `${field}.${k}`);
  };
  const domain = vmi.spec.domain;
  canon(domain.resources?.requests as Record<string, unknown> | undefined, 'spec.domain.resources.requests');
  canon(domain.resources?.limits as Record<string, unknown> | undefined, 'spec.domain.resources.limits');
  const memory = domain.memory as Record<string, unknown> | undefined;
  if (memory) for (const k of ['guest', 'maxGuest']) if (memory[k] !== undefined) memory[k] = canonicalQuantity(memory[k] as string, `spec.domain.memory.${k}`);
  canon(vmi.status?.memory as Record<string, unknown> | undefined, 'status.memory');
}

/** Sets the PCI topology version `v3` in `annotations` unless one is there. */
export function withPciTopologyVersion(annotations: Record<string, string> | undefined): Record<string, string> {
  return annotations?.[PCI_TOPOLOGY_VERSION_ANNOTATION] !== undefined ? annotations : { ...annotations, [PCI_TOPOLOGY_VERSION_ANNOTATION]: 'v3' };
}

/** The VMI as virt-api's webhook returns it for a CREATE of `input` (a copy). */
export function mutateVmiOnCreate(input: VirtualMachineInstance, ctx: MutationContext): VirtualMachineInstance {
  const config: ClusterConfig = clusterConfigFromKubeVirt(ctx.kubevirt);
  const newUuid = ctx.newUuid ?? randomUUID;
  const raw = structuredClone(input);
  // The CR's cpuRequest (when not KubeVirt's 100m) for a VMI that names no CPU request or limit;
  // a lone limit becomes the request first (applyVmiDefaults), which this then leaves alone.
  const cpuRequest = (ctx.kubevirt?.spec?.configuration as { cpuRequest?: string | number } | undefined)?.cpuRequest;
  const resources = raw.spec?.domain ? (raw.spec.domain.resources ??= {}) : undefined;
  if (resources && cpuRequest !== undefined && String(cpuRequest) !== '100m' && resources.requests?.['cpu'] === undefined && resources.limits?.['cpu'] === undefined && raw.spec.domain.cpu?.dedicatedCpuPlacement !== true) {
    resources.requests = { ...resources.requests, cpu: cpuRequest };
  }
  const hadFinalizer = (raw.metadata?.finalizers ?? []).includes(VMI_FINALIZER);
  // applyVmiDefaults also writes the CPU model, phase, runtimeUser, status and finalizer; the
  // object and architecture defaults below come between in KubeVirt's order, and touch none of them.
  // KubeVirt's configuration default is None (a CR without one keeps it).
  const vmi = applyVmiDefaults(raw, { ...config, evictionStrategy: config.evictionStrategy ?? 'None' });
  const spec = vmi.spec as unknown as Json;
  objectDefaults(spec, newUuid);
  hypervDependencies(spec);
  // arm64's host-passthrough comes before the CPU model default: undo a model the defaults set
  // that the VMI did not name, so the architecture's wins.
  if (vmi.spec.architecture === 'arm64' && !input.spec?.domain?.cpu?.model) delete (child(child(spec, 'domain'), 'cpu'))['model'];
  architectureDefaults(spec);
  const defaulted = applyHotplugDefaults(vmi, config);
  // KubeVirt derives maxSockets as sockets × ratio: a topology of cores or threads alone (sockets
  // 0) gets 0, which is not written; applyHotplugDefaults counts such a VMI as one socket.
  const cpu = defaulted.spec.domain.cpu;
  if (cpu && !cpu.sockets && !input.spec?.domain?.cpu?.maxSockets && !(config.liveUpdate.maxCpuSockets ?? 0)) delete cpu.maxSockets;
  // Go omits empty lists.
  if (defaulted.spec.volumes?.length === 0) delete defaulted.spec.volumes;
  if (defaulted.spec.domain.devices.disks?.length === 0) delete defaulted.spec.domain.devices.disks;
  const meta = (defaulted.metadata ??= {});
  if (supportsPcieHotplug(defaulted.spec)) meta.annotations = withPciTopologyVersion(meta.annotations);
  const parity = ctx.kubevirt?.metadata?.annotations?.[EMULATOR_THREAD_PARITY_ANNOTATION];
  if (defaulted.spec.domain.cpu?.isolateEmulatorThread && parity !== undefined && gateEnabled(config, 'AlignCPUs')) {
    meta.annotations = { ...meta.annotations, [EMULATOR_THREAD_PARITY_ANNOTATION]: '' };
  }
  if (hadFinalizer) meta.finalizers = [...(meta.finalizers ?? []), VMI_FINALIZER];
  const launchSecurity = defaulted.spec.domain.launchSecurity as { tdx?: unknown } | undefined;
  if (launchSecurity?.tdx !== undefined) {
    const qgs = (ctx.kubevirt?.spec?.configuration as { confidentialCompute?: { tdx?: { attestation?: { qgsSocketPath?: string } } } } | undefined)?.confidentialCompute?.tdx?.attestation?.qgsSocketPath;
    meta.annotations = { ...meta.annotations, [QGS_SOCKET_PATH_ANNOTATION]: qgs ?? DEFAULT_QGS_SOCKET_PATH };
  }
  canonicalQuantities(defaulted);
  const status = (defaulted.status ??= {});
  // Not omitempty in KubeVirt's status type: its patch writes them even at their zero value.
  status.guestOSInfo ??= {};
  if (!gateEnabled(config, 'Root')) status.runtimeUser = NON_ROOT_UID;
  else status.runtimeUser ??= 0;
  // The CPU topology status is omitempty per field: a zero is not written.
  const topology = status.currentCPUTopology as Record<string, number | undefined> | undefined;
  if (topology) for (const k of Object.keys(topology)) if (!topology[k]) delete topology[k];
  status.phase = 'Pending';
  status.phaseTransitionTimestamps = [...(status.phaseTransitionTimestamps ?? []), { phase: 'Pending', phaseTransitionTimestamp: ctx.now }];
  return defaulted;
}
