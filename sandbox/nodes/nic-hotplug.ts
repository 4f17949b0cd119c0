/**
 * virt-handler's side of NIC hotplug, as a pure step (reference-vm-vmi-depth §5 "NIC hotplug",
 * §6; KubeVirt's virt-handler plugs what the pod has and the domain lacks, and its status
 * rebuild — `netstat.go` — reports what the domain has plus what Multus reports): once the VMI
 * controller reports a non-`absent` interface as attached to the pod (`multus-status` in its
 * `infoSource`) and the domain lacks it, the NIC is attached to the domain and the guest agent
 * sees it (`domain, guest-agent, multus-status`, a MAC, a guest interface name); an `absent`
 * interface the domain has is detached (only what Multus still reports stays); an `absent` one
 * that neither the domain nor Multus reports any longer leaves `status.interfaces`, which lets the
 * VM controller drop it from the VMI and the VM.
 */
import { macFor } from './vmi-running-status.ts';
import type { Vmi } from './objects.ts';

interface InterfaceStatus {
  name?: string;
  infoSource?: string;
  podInterfaceName?: string;
  [field: string]: unknown;
}

const DOMAIN = 'domain';
const MULTUS = 'multus-status';

const sources = (s: InterfaceStatus) => (s.infoSource ?? '').split(',').map((x) => x.trim()).filter(Boolean);

/** `status.interfaces` after one handler step, or undefined when nothing moves. */
export function nextInterfaceStatus(vmi: Vmi): InterfaceStatus[] | undefined {
  const specIfaces = vmi.spec?.domain?.devices?.interfaces ?? [];
  const current = (vmi.status?.interfaces ?? []) as InterfaceStatus[];
  let changed = false;
  const next: InterfaceStatus[] = [];
  for (const s of current) {
    const index = specIfaces.findIndex((i) => i.name === s.name);
    const spec = specIfaces[index];
    const src = sources(s);
    const inDomain = src.includes(DOMAIN);
    const inPod = src.includes(MULTUS);
    if (spec && spec.state !== 'absent' && inPod && !inDomain) {
      changed = true;
      next.push({ ...s, infoSource: `${DOMAIN}, guest-agent, ${MULTUS}`, interfaceName: `eth${index}`, mac: spec.macAddress ?? macFor(vmi.metadata?.uid ?? '', spec.name), queueCount: 1, linkState: 'up' });
    } else if (spec?.state === 'absent' && inDomain) {
      changed = true;
      next.push({ name: s.name, ...(s.podInterfaceName ? { podInterfaceName: s.podInterfaceName } : {}), ...(inPod ? { infoSource: MULTUS } : {}) });
    } else if (spec?.state === 'absent' && !inPod) {
      changed = true;
    } else {
      next.push(s);
    }
  }
  return changed ? next : undefined;
}
