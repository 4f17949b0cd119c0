/**
 * KubeVirt's `ValidateLiveUpdateMemory` (`pkg/liveupdate/memory/memory.go`, reference-vm-vmi-depth
 * §5): whether a VMI spec can have its guest memory hot-plugged up to `maxGuest`. Used by the
 * hotplug defaults (a `maxGuest` that fails is dropped) and by the VM controller's memory hotplug
 * ("memory hotplug not supported, <err>"). The checks run in the reference's order. Pure.
 */
import type { Quantity as ApiQuantity, VirtualMachineInstanceSpec } from '../api/index.ts';
import { compareQuantity, parseQuantity, quantityValue } from '../api/quantity.ts';

const MI2 = 2n * 1024n * 1024n;
const GI = 1024n * 1024n * 1024n;

/**
 * The first reason `spec` cannot hot-plug memory up to `maxGuest`, or undefined when it can.
 * `defaultArchitecture` stands for an unset `spec.architecture` (the webhook fills it in upstream).
 */
export function liveUpdateMemoryProblem(spec: VirtualMachineInstanceSpec, maxGuest: ApiQuantity | undefined, defaultArchitecture = 'amd64'): string | undefined {
  const domain = spec.domain;
  if (domain.cpu?.realtime) return 'Memory hotplug is not compatible with realtime VMs';
  if (domain.cpu?.numa?.guestMappingPassthrough) return 'Memory hotplug is not compatible with guest mapping passthrough';
  if (domain.launchSecurity) return 'Memory hotplug is not compatible with encrypted VMs';
  const guestRaw = domain.memory?.guest;
  if (guestRaw === undefined || maxGuest === undefined) return 'Guest memory must be set when memory hotplug is enabled';
  const guest = parseQuantity(guestRaw, 'spec.domain.memory.guest');
  const max = parseQuantity(maxGuest, 'spec.domain.memory.maxGuest');
  if (compareQuantity(max, guest) < 0) return 'Guest memory cannot be higher than maxGuest';
  const gigantic = domain.memory?.hugepages?.pageSize !== undefined && parseQuantity(domain.memory.hugepages.pageSize).nanos === GI * 1_000_000_000n;
  const alignment = gigantic ? GI : MI2;
  const label = gigantic ? '1Gi' : '2Mi';
  if (quantityValue(guest) % alignment !== 0n) return `Guest memory must be ${label} aligned`;
  if (quantityValue(max) % alignment !== 0n) return `MaxGuest must be ${label} aligned`;
  if ((spec.architecture || defaultArchitecture) !== 'amd64') return 'Memory hotplug is only available for x86_64 VMs';
  if (quantityValue(guest) < GI) return 'Memory hotplug is only available for VMs with at least 1Gi of guest memory';
  return undefined;
}
