/**
 * Which interface and network changes of the VM template need a restart (KubeVirt's
 * `netvmliveupdate.IsRestartRequired`, reference-vm-vmi-depth §5 `syncRestartRequired`), pure.
 * A restart is needed when an interface the VMI has is missing from the template (it was removed
 * rather than set `absent`), when one it has changed in anything but `state`, when the template
 * adds the pod network, when a network the VMI has was removed, or when one changed — on a
 * migratable VMI a Multus `networkName` change excepted (the next migration moves it). Anything
 * else (a new bridge/SR-IOV interface, a `state` change) is hot-plugged by `interfaces-sync.ts`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Interface, Network, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { isMigratable } from './interfaces-sync.ts';

function withoutState(i: Interface | undefined): Omit<Interface, 'state'> | undefined {
  if (!i) return undefined;
  const { state: _state, ...rest } = i;
  return rest;
}

function withoutNetworkName(n: Network | undefined): Network | undefined {
  return n?.multus ? { ...n, multus: { ...n.multus, networkName: '' } } : n;
}

/** True when the template's (`desired`, expanded) interfaces and networks cannot be applied to `vmi` live. */
export function networkRestartRequired(desired: VirtualMachineInstanceSpec, vmi: VirtualMachineInstance): boolean {
  const desiredIfaces = new Map((desired.domain.devices.interfaces ?? []).map((i) => [i.name, i]));
  for (const current of vmi.spec.domain.devices.interfaces ?? []) {
    const want = desiredIfaces.get(current.name);
    if (!want || !isDeepStrictEqual(withoutState(want), withoutState(current))) return true;
  }
  const desiredNets = desired.networks ?? [];
  const currentNets = vmi.spec.networks ?? [];
  if (desiredNets.some((n) => n.pod !== undefined) && !currentNets.some((n) => n.pod !== undefined)) return true;
  const byName = new Map(desiredNets.map((n) => [n.name, n]));
  const normalize = isMigratable(vmi) ? withoutNetworkName : (n: Network | undefined) => n;
  return currentNets.some((n) => !byName.has(n.name) || !isDeepStrictEqual(normalize(byName.get(n.name)), normalize(n)));
}
