/**
 * Applying a preference to a VMI spec (KubeVirt's preference `apply`, reference-vm-vmi-depth.md
 * §1.5), pure. Preferences never conflict: each one fills a field only where the VM left it
 * unset — with three stated exceptions (`preferredDisableHotplug` overwrites, a sound model needs
 * a sound device, a video type creates `video: {}`).
 */
import type { Devices, VirtualMachineInstanceSpec, VirtualMachinePreferenceSpec } from '../api/index.ts';

/**
 * The `preferredAutoattach*` preferences alone, applied first at start (before the input device
 * and the default pod network are added, so those follow them). Mutates `spec`.
 */
export function applyAutoattachPreferences(preference: VirtualMachinePreferenceSpec | undefined, spec: VirtualMachineInstanceSpec): void {
  const p = preference?.devices;
  if (!p) return;
  const d = spec.domain.devices;
  const fill = (key: keyof Devices, value: boolean | undefined) => {
    if (value !== undefined && d[key] === undefined) (d as Record<string, unknown>)[key] = value;
  };
  fill('autoattachGraphicsDevice', p.preferredAutoattachGraphicsDevice);
  fill('autoattachMemBalloon', p.preferredAutoattachMemBalloon);
  fill('autoattachPodInterface', p.preferredAutoattachPodInterface);
  fill('autoattachSerialConsole', p.preferredAutoattachSerialConsole);
  fill('autoattachInputDevice', p.preferredAutoattachInputDevice);
}

/** Applies every preference to a copy of `spec` and `annotations`. */
export function applyPreference(
  preference: VirtualMachinePreferenceSpec,
  specIn: VirtualMachineInstanceSpec,
  annotationsIn: Readonly<Record<string, string>> = {},
): { spec: VirtualMachineInstanceSpec; annotations: Record<string, string> } {
  const spec = structuredClone(specIn);
  const annotations = { ...annotationsIn };
  applyCpuFeatures(preference, spec);
  applyDevices(preference, spec);
  applyFeatures(preference, spec);
  applyFirmware(preference, spec);
  const domain = spec.domain;
  if (preference.machine?.preferredMachineType && !domain.machine?.type) domain.machine = { ...domain.machine, type: preference.machine.preferredMachineType };
  if (preference.clock) {
    const clock = { ...domain.clock };
    // The offset is all or nothing: a partial one would surprise (neither utc nor timezone set).
    if (preference.clock.preferredClockOffset && clock.utc === undefined && clock.timezone === undefined) Object.assign(clock, structuredClone(preference.clock.preferredClockOffset));
    if (preference.clock.preferredTimer && clock.timer === undefined) clock.timer = structuredClone(preference.clock.preferredTimer);
    domain.clock = clock;
  }
  if (preference.preferredSubdomain && !spec.subdomain) spec.subdomain = preference.preferredSubdomain;
  if (preference.preferredTerminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds === undefined) {
    spec.terminationGracePeriodSeconds = preference.preferredTerminationGracePeriodSeconds;
  }
  if (preference.preferredArchitecture && !spec.architecture) spec.architecture = preference.preferredArchitecture;
  if (preference.preferredLaunchSecurity && domain.launchSecurity === undefined) domain.launchSecurity = structuredClone(preference.preferredLaunchSecurity);
  for (const [key, value] of Object.entries(preference.annotations ?? {})) if (!(key in annotations)) annotations[key] = value;
  return { spec, annotations };
}

function applyCpuFeatures(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const wanted = preference.cpu?.preferredCPUFeatures ?? [];
  if (wanted.length === 0) return;
  const cpu = { ...spec.domain.cpu };
  const features = [...(cpu.features ?? [])];
  const have = new Set(features.map((f) => f.name));
  for (const f of wanted) if (!have.has(f.name)) features.push(structuredClone(f));
  cpu.features = features;
  spec.domain.cpu = cpu;
}

function applyDevices(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices;
  if (!p) return;
  applyAutoattachPreferences(preference, spec);
  const d = spec.domain.devices;
  const fill = <K extends keyof Devices>(key: K, value: Devices[K] | undefined) => {
    if (value !== undefined && d[key] === undefined) d[key] = structuredClone(value);
  };
  fill('useVirtioTransitional', p.preferredUseVirtioTransitional);
  fill('blockMultiQueue', p.preferredBlockMultiQueue);
  fill('networkInterfaceMultiqueue', p.preferredNetworkInterfaceMultiQueue);
  fill('rng', p.preferredRng);
  fill('tpm', p.preferredTPM);
  // KubeVirt cannot tell an unset disableHotplug from false: the preference overwrites.
  if (p.preferredDisableHotplug !== undefined) d.disableHotplug = p.preferredDisableHotplug;
  if (p.preferredSoundModel && d.sound && !d.sound.model) d.sound = { ...d.sound, model: p.preferredSoundModel };
  if (p.preferredVideoType) {
    const video = { ...d.video };
    if (!video.type) video.type = p.preferredVideoType;
    d.video = video;
  }
  if (p.preferredVirtualGPUOptions) {
    for (const gpu of d.gpus ?? []) if (gpu.virtualGPUOptions === undefined) gpu.virtualGPUOptions = structuredClone(p.preferredVirtualGPUOptions);
  }
  if (p.preferredPanicDeviceModel) {
    for (const panic of d.panicDevices ?? []) if (!panic.model) panic.model = p.preferredPanicDeviceModel;
  }

  for (const disk of d.disks ?? []) {
    if (!disk.disk && !disk.cdrom && !disk.lun) disk.disk = {};
    if (disk.disk) {
      if (p.preferredDiskBus && !disk.disk.bus) disk.disk.bus = p.preferredDiskBus;
      if (p.preferredDiskBlockSize && disk.blockSize === undefined) disk.blockSize = structuredClone(p.preferredDiskBlockSize);
      if (p.preferredDiskCache && !disk.cache) disk.cache = p.preferredDiskCache;
      if (p.preferredDiskIO && !disk.io) disk.io = p.preferredDiskIO;
      // A dedicated I/O thread only exists for virtio disks.
      if (p.preferredDiskDedicatedIoThread !== undefined && disk.dedicatedIOThread === undefined && disk.disk.bus === 'virtio') {
        disk.dedicatedIOThread = p.preferredDiskDedicatedIoThread;
      }
    } else if (disk.cdrom) {
      if (p.preferredCdromBus && !disk.cdrom.bus) disk.cdrom.bus = p.preferredCdromBus;
    } else if (disk.lun) {
      if (p.preferredLunBus && !disk.lun.bus) disk.lun.bus = p.preferredLunBus;
    }
  }

  const podNetworks = new Set((spec.networks ?? []).filter((n) => n.pod !== undefined).map((n) => n.name));
  for (const iface of d.interfaces ?? []) {
    if (p.preferredInterfaceModel && !iface.model) iface.model = p.preferredInterfaceModel;
    const unbound = !iface.bridge && !iface.masquerade && !iface.sriov && !iface.slirp && !iface.macvtap && !iface.passt && !iface.binding;
    if (p.preferredInterfaceMasquerade && unbound && podNetworks.has(iface.name)) iface.masquerade = structuredClone(p.preferredInterfaceMasquerade);
  }

  for (const input of d.inputs ?? []) {
    if (p.preferredInputBus && !input.bus) input.bus = p.preferredInputBus;
    if (p.preferredInputType && !input.type) input.type = p.preferredInputType;
  }
}

function applyFeatures(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.features;
  if (!p) return;
  const f = { ...spec.domain.features };
  if (p.preferredAcpi && f.acpi === undefined) f.acpi = structuredClone(p.preferredAcpi);
  if (p.preferredApic && f.apic === undefined) f.apic = structuredClone(p.preferredApic);
  if (p.preferredKvm && f.kvm === undefined) f.kvm = structuredClone(p.preferredKvm);
  if (p.preferredPvspinlock && f.pvspinlock === undefined) f.pvspinlock = structuredClone(p.preferredPvspinlock);
  if (p.preferredSmm && f.smm === undefined) f.smm = structuredClone(p.preferredSmm);
  if (p.preferredHyperv) {
    // Hyper-V enlightenments are filled one by one.
    const hv: Record<string, unknown> = { ...f.hyperv };
    for (const [k, v] of Object.entries(p.preferredHyperv)) if (v !== undefined && hv[k] === undefined) hv[k] = structuredClone(v);
    f.hyperv = hv;
  }
  spec.domain.features = f;
}

function applyFirmware(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.firmware;
  if (!p) return;
  const firmware = { ...spec.domain.firmware };
  // A firmware preference always creates the bootloader, even when it then sets nothing.
  const bootloader = { ...firmware.bootloader };
  const unset = () => bootloader.bios === undefined && bootloader.efi === undefined;
  if (p.preferredEfi !== undefined) {
    // preferredEfi wins over the deprecated flags.
    if (unset()) bootloader.efi = structuredClone(p.preferredEfi);
  } else {
    if (p.preferredUseBios && unset()) bootloader.bios = {};
    if (p.preferredUseBiosSerial !== undefined && bootloader.bios && bootloader.bios.useSerial === undefined) {
      bootloader.bios = { ...bootloader.bios, useSerial: p.preferredUseBiosSerial };
    }
    if (p.preferredUseEfi && unset()) bootloader.efi = {};
    if (p.preferredUseSecureBoot !== undefined && bootloader.efi && bootloader.efi.secureBoot === undefined) {
      bootloader.efi = { ...bootloader.efi, secureBoot: p.preferredUseSecureBoot };
    }
  }
  firmware.bootloader = bootloader;
  spec.domain.firmware = firmware;
}
