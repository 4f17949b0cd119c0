/**
 * The VMI status fields virt-handler reports once the domain runs, as a pure function of the VMI
 * and its launcher pod: the fields the controllers read afterwards (reference §a.4, §b.8, §d):
 * interfaces, guestOSInfo, machine, AgentConnected, Ready. What the handler writes on every
 * update (selinuxContext, the migratability conditions, migrationMethod) is vmi-owner-status.ts.
 */
import { createHash } from 'node:crypto';
import { NO_GUEST_AGENT_ANNOTATION } from './guest-agent.ts';
import { withCondition, type Condition, type Pod, type Vmi } from './objects.ts';

/** A stable locally administered MAC for an interface. */
export function macFor(vmiUid: string, ifaceName: string): string {
  const h = createHash('sha256').update(`${vmiUid}/${ifaceName}`).digest();
  return ['02', ...[0, 1, 2, 3, 4].map((i) => h[i]!.toString(16).padStart(2, '0'))].join(':');
}

/** `status.interfaces` as the domain + guest agent report them, on the launcher pod's IP. */
export function interfacesOf(vmi: Vmi, podIP: string | undefined): Record<string, unknown>[] {
  const specIfaces = vmi.spec?.domain?.devices?.interfaces ?? [{ name: 'default' }];
  // An `absent` interface is not plugged into the domain (a NIC unplug in progress).
  return specIfaces.flatMap((iface, i) => (iface.state === 'absent' ? [] : [{
    name: iface.name,
    interfaceName: `eth${i}`,
    mac: iface.macAddress ?? macFor(vmi.metadata?.uid ?? '', iface.name),
    infoSource: 'domain, guest-agent',
    queueCount: 1,
    linkState: 'up',
    ...(i === 0 && podIP ? { ipAddress: podIP, ipAddresses: [podIP], podInterfaceName: 'eth0' } : {}),
  }]));
}

/** The status patch that moves a Scheduled VMI to Running. */
export function runningVmiStatus(vmi: Vmi, launcher: Pod, nowIso: string): Record<string, unknown> {
  const status = vmi.status ?? {};
  const cond = (type: string, s: string, extra: Partial<Condition> = {}): Condition => ({ type, status: s, lastProbeTime: null, lastTransitionTime: nowIso, ...extra });
  let conditions = status.conditions ?? [];
  // A guest without an agent never reports AgentConnected (snapshots then say NoGuestAgent).
  if (vmi.metadata?.annotations?.[NO_GUEST_AGENT_ANNOTATION] !== 'true') conditions = withCondition(conditions, cond('AgentConnected', 'True'));
  // Ready mirrors the launcher pod's Ready condition, exactly as the VMI controller computes it,
  // so the two writers never flap.
  const podReady = launcher.status?.conditions?.find((c) => c.type === 'Ready');
  if (podReady) conditions = withCondition(conditions, { ...podReady });
  const cpu = vmi.spec?.domain?.cpu;
  const guest = vmi.spec?.domain?.memory?.guest ?? vmi.spec?.domain?.resources?.requests?.memory;
  const memory = (status.memory ?? {}) as Record<string, unknown>;
  const transitions = (status.phaseTransitionTimestamps ?? []) as unknown[];
  return {
    phase: 'Running',
    conditions,
    interfaces: interfacesOf(vmi, launcher.status?.podIP),
    guestOSInfo: { id: 'sandbox', name: 'Sandbox Linux', prettyName: 'Sandbox Linux 1', version: '1', versionId: '1', kernelRelease: '6.12.0', machine: 'x86_64' },
    machine: { type: vmi.spec?.domain?.machine?.type ?? 'q35' },
    phaseTransitionTimestamps: [...transitions, { phase: 'Running', phaseTransitionTimestamp: nowIso }],
    ...(status.currentCPUTopology ? {} : { currentCPUTopology: { sockets: cpu?.sockets ?? 1, cores: cpu?.cores ?? 1, threads: cpu?.threads ?? 1 } }),
    ...(guest ? { memory: { guestRequested: guest, ...memory, guestAtBoot: guest, guestCurrent: guest } } : {}),
  };
}
