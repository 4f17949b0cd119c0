/**
 * NIC hotplug, the VM side (reference-vm-vmi-depth §5 "NIC hotplug", KubeVirt's network
 * synchroniser `pkg/network/controllers/vm.go`), pure: what the VM template asks of the running
 * VMI's interfaces and networks, and which `absent` interfaces can leave the template.
 *
 * On the VMI (not being deleted):
 * - a template interface the VMI lacks is added with its network, unless it is `absent` or is bound
 *   by neither `bridge` nor `sriov`;
 * - a changed `state` is copied to an interface the VMI has (not to one already `absent`), except a
 *   change to `absent` on a VMI whose pod names its interfaces the ordinal way (`net<N>`: removing
 *   one would renumber the others);
 * - an `absent` interface that is no longer in `status.interfaces` (unplugged) leaves the VMI spec
 *   with its network;
 * - on a migratable VMI, each Multus network takes the template's `networkName` (the next
 *   migration moves it to the new network attachment).
 * On the VM: an `absent` interface in neither the VMI spec (after the above) nor its status leaves
 * the template with its network — with no VMI, every `absent` one does.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Interface, Network, VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { INTERFACE_STATE_ABSENT, VMI_CONDITION } from '../../../shared/api/well-known.ts';
import { hasOrdinalSecondaryIfaces } from '../../../shared/network/name-scheme.ts';

const ABSENT = INTERFACE_STATE_ABSENT;

/** Interfaces and networks of one spec. */
export interface NetSpec {
  readonly interfaces: Interface[];
  readonly networks: Network[];
}

export interface InterfaceSyncPlan {
  /** The VMI's interfaces and networks after the sync, when they change. */
  readonly vmi?: NetSpec;
  /** The VM template's interfaces and networks, when `absent` ones leave it. */
  readonly template?: NetSpec;
}

/** The VMI reports `LiveMigratable=True` (KubeVirt's `IsMigratable`). */
export function isMigratable(vmi: VirtualMachineInstance): boolean {
  return vmi.status?.conditions?.some((c) => c.type === VMI_CONDITION.LiveMigratable && c.status === 'True') ?? false;
}

/**
 * `networks` without those whose interface was dropped. Upstream rebuilds the list in interface
 * order (and drops a network that has no interface); we keep the user's order and touch only the
 * dropped ones, so a spec whose lists are ordered differently is not rewritten for nothing.
 */
function withoutNetworksOf(networks: readonly Network[], dropped: ReadonlySet<string>): Network[] {
  return networks.filter((n) => !dropped.has(n.name));
}

/** The VMI's interfaces and networks as the template asks (before dropping unplugged ones). */
function applyTemplateRequests(vm: VirtualMachine, vmi: VirtualMachineInstance): NetSpec {
  const template = vm.spec.template.spec;
  const interfaces = structuredClone(vmi.spec.domain.devices.interfaces ?? []);
  const networks = structuredClone(vmi.spec.networks ?? []);
  const ordinal = hasOrdinalSecondaryIfaces(vmi.spec.networks ?? [], vmi.status?.interfaces ?? []);
  const templateNets = new Map((template?.networks ?? []).map((n) => [n.name, n]));
  for (const want of template?.domain.devices.interfaces ?? []) {
    const have = interfaces.find((i) => i.name === want.name);
    if (!have) {
      const net = templateNets.get(want.name);
      // Only bridge and SR-IOV interfaces can be hot-plugged; an interface without a network is
      // virt-api's to refuse (upstream would append an empty network).
      if (want.state !== ABSENT && (want.bridge !== undefined || want.sriov !== undefined) && net) {
        networks.push(structuredClone(net));
        interfaces.push(structuredClone(want));
      }
    } else if (want.state !== have.state && have.state !== ABSENT) {
      if (ordinal && want.state === ABSENT) continue;
      if (want.state === undefined) delete have.state;
      else have.state = want.state;
    }
  }
  return { interfaces, networks };
}

/** The plan for `vm` and its VMI (none when there is nothing to do). */
export function planInterfaceSync(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): InterfaceSyncPlan {
  if (vmi?.metadata?.deletionTimestamp) return {};
  const inStatus = new Set((vmi?.status?.interfaces ?? []).map((s) => s.name ?? ''));
  let vmiNext: NetSpec | undefined;
  let vmiIfaces = new Set<string>();
  if (vmi) {
    const asked = applyTemplateRequests(vm, vmi);
    // Unplugged: absent, and virt-handler no longer reports it.
    const dropped = new Set(asked.interfaces.filter((i) => i.state === ABSENT && !inStatus.has(i.name)).map((i) => i.name));
    let networks = withoutNetworksOf(asked.networks, dropped);
    const interfaces = asked.interfaces.filter((i) => !dropped.has(i.name));
    if (isMigratable(vmi)) {
      const templateNets = new Map((vm.spec.template.spec?.networks ?? []).map((n) => [n.name, n]));
      networks = networks.map((n) => {
        const want = templateNets.get(n.name)?.multus;
        return want && n.multus && want.networkName !== n.multus.networkName ? { ...n, multus: { ...n.multus, networkName: want.networkName } } : n;
      });
    }
    vmiIfaces = new Set(interfaces.map((i) => i.name));
    const changed = !isDeepStrictEqual(interfaces, vmi.spec.domain.devices.interfaces ?? []) || !isDeepStrictEqual(networks, vmi.spec.networks ?? []);
    if (changed) vmiNext = { interfaces, networks };
  }
  const template = vm.spec.template.spec;
  const templateIfaces = template?.domain.devices.interfaces ?? [];
  const gone = new Set(templateIfaces.filter((i) => i.state === ABSENT && !vmiIfaces.has(i.name) && !inStatus.has(i.name)).map((i) => i.name));
  const templateNext = gone.size > 0 ? { interfaces: templateIfaces.filter((i) => !gone.has(i.name)), networks: withoutNetworksOf(template?.networks ?? [], gone) } : undefined;
  return { ...(vmiNext ? { vmi: vmiNext } : {}), ...(templateNext ? { template: templateNext } : {}) };
}
