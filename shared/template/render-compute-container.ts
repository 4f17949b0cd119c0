/**
 * The `compute` container: virt-launcher-monitor with its arguments, environment, ports,
 * probes and security context (reference §b.3). Always the pod's first container — the SR-IOV
 * operator's webhook adds its resources to the first container.
 */
import { createHash } from 'node:crypto';
import type { V1Container, V1EnvVar, V1Probe, V1VolumeDevice, V1VolumeMount } from '@kubernetes/client-node';
import type { Probe, VirtualMachineInstance } from '../api/index.ts';
import {
  COMPUTE_CONTAINER, DEFAULT_VMI_GRACE_PERIOD_SECONDS, FUNC_TEST_LAUNCHER_FAIL_FAST_ANNOTATION,
  KEEP_LAUNCHER_ALIVE_ANNOTATION, LIBVIRT_LOG_FILTERS_ANNOTATION, NON_ROOT_UID,
} from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { archSettings, gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { CONTAINER_DISK_DIR, EPHEMERAL_DISK_DIR, SHARE_DIR } from './paths.ts';
import type { RenderedResources } from './render-resources.ts';
import { xdgEnv } from './support-containers.ts';
import { isNonRoot, vmiName, vmiNamespace, vmiUid } from './vmi-traits.ts';

const QEMU_TIMEOUT_BASE_SECONDS = 240;
const QEMU_TIMEOUT_JITTER_RANGE = 120;
/** virt-handler needs time to tear the domain down before the kubelet kills the launcher. */
export const GRACE_PERIOD_PADDING_SECONDS = 15;
const LIBVIRT_STARTUP_DELAY_SECONDS = 10;

/** The VMI's termination grace period (default 30 s). */
export function vmiGracePeriodSeconds(vmi: VirtualMachineInstance): number {
  return vmi.spec.terminationGracePeriodSeconds ?? DEFAULT_VMI_GRACE_PERIOD_SECONDS;
}

/**
 * KubeVirt spreads qemu timeouts with a random 0–119 s jitter; we derive it from the VMI UID
 * instead so rendering stays deterministic (same VMI → same pod) while still spreading VMIs.
 */
export function qemuTimeoutJitter(uid: string): number {
  return createHash('sha256').update(uid).digest().readUInt32BE(0) % QEMU_TIMEOUT_JITTER_RANGE;
}

/** The VMI's launcher log verbosity: label `logVerbosity`, else the cluster's. */
export function launcherVerbosity(vmi: VirtualMachineInstance, config: ClusterConfig): { value: number; explicit: boolean } {
  const label = vmi.metadata?.labels?.['logVerbosity'];
  if (label === undefined) return { value: config.virtLauncherVerbosity, explicit: false };
  if (!/^-?\d+$/.test(label)) throw new InvalidInputError('metadata.labels.logVerbosity', `must be an integer, got '${label}'`);
  return { value: Number(label), explicit: true };
}

/**
 * The VMI probe as the compute container's probe: copied, `initialDelaySeconds` + 10 (libvirt's
 * start-up); exec and guest-agent probes run through `virt-probe` inside the guest, and only
 * they get one second more of `timeoutSeconds` for that extra step. HTTP and TCP probes keep
 * the VMI's timeout.
 */
function wrapProbe(p: Probe | undefined, vmi: VirtualMachineInstance, field: string): V1Probe | undefined {
  if (!p) return undefined;
  const timeout = p.timeoutSeconds ?? 1;
  const out: V1Probe = {
    ...(p.failureThreshold !== undefined && { failureThreshold: p.failureThreshold }),
    initialDelaySeconds: (p.initialDelaySeconds ?? 0) + LIBVIRT_STARTUP_DELAY_SECONDS,
    ...(p.periodSeconds !== undefined && { periodSeconds: p.periodSeconds }),
    ...(p.successThreshold !== undefined && { successThreshold: p.successThreshold }),
    timeoutSeconds: timeout,
  };
  const probeCmd = ['virt-probe', '--domainName', `${vmiNamespace(vmi)}_${vmiName(vmi)}`, '--timeoutSeconds', String(timeout)];
  if (p.exec) {
    const [cmd, ...args] = p.exec.command ?? [];
    if (cmd === undefined) throw new InvalidInputError(`${field}.exec.command`, 'must not be empty');
    out.exec = { command: [...probeCmd, '--command', cmd, '--', ...args] };
    out.timeoutSeconds = timeout + 1;
  } else if (p.guestAgentPing) {
    out.exec = { command: [...probeCmd, '--guestAgentPing'] };
    out.timeoutSeconds = timeout + 1;
  } else if (p.httpGet) {
    out.httpGet = p.httpGet as V1Probe['httpGet'];
  } else if (p.tcpSocket) {
    out.tcpSocket = p.tcpSocket as V1Probe['tcpSocket'];
  }
  return out;
}

export interface ComputeInputs {
  resources: RenderedResources;
  mounts: V1VolumeMount[];
  devices: V1VolumeDevice[];
  sharedFilesystemPaths: string[];
  jitterSeconds?: number | undefined;
  /** How many hook sidecars the launcher waits for. */
  hookSidecars: number;
}

/** Renders the compute container. */
export function renderComputeContainer(vmi: VirtualMachineInstance, config: ClusterConfig, inputs: ComputeInputs): V1Container {
  const nonRoot = isNonRoot(vmi);
  const uid = vmiUid(vmi);
  const annotations = vmi.metadata?.annotations ?? {};
  const grace = vmiGracePeriodSeconds(vmi) + GRACE_PERIOD_PADDING_SECONDS;
  const jitter = inputs.jitterSeconds ?? qemuTimeoutJitter(uid);
  const args = [
    '--qemu-timeout', `${QEMU_TIMEOUT_BASE_SECONDS + jitter}s`,
    '--name', vmiName(vmi),
    '--uid', uid,
    '--namespace', vmiNamespace(vmi),
    '--kubevirt-share-dir', SHARE_DIR,
    '--ephemeral-disk-dir', EPHEMERAL_DISK_DIR,
    '--container-disk-dir', CONTAINER_DISK_DIR,
    '--grace-period-seconds', String(grace),
    '--hook-sidecars', String(inputs.hookSidecars),
    '--ovmf-path', archSettings(config, vmi.spec.architecture).ovmfPath,
    '--disk-memory-limit', config.diskMemoryLimitBytes.toString(),
    '--hypervisor', config.hypervisor,
  ];
  if (nonRoot) args.push('--run-as-nonroot');
  if (gateEnabled(config, 'ImageVolume')) args.push('--image-volume');
  if (gateEnabled(config, 'PodSecondaryInterfaceNamingUpgrade')) args.push('--upgrade-ordinal-ifaces');
  if (gateEnabled(config, 'VGPULiveMigration')) args.push('--vgpu-dedicated-hook');
  if (gateEnabled(config, 'VMStatsCollector')) args.push('--vm-stats-collector');
  if (gateEnabled(config, 'FirmwareAutoSelection')) args.push('--firmware-auto-selection');
  const filters = annotations[LIBVIRT_LOG_FILTERS_ANNOTATION];
  if (filters !== undefined) args.push('--libvirt-log-filters', filters);
  if (config.useEmulation) args.push('--allow-emulation');
  const keep = annotations[KEEP_LAUNCHER_ALIVE_ANNOTATION];
  if (keep !== undefined && (keep === '' || keep.toLowerCase().startsWith('true'))) args.push('--keep-after-failure');
  if (annotations[FUNC_TEST_LAUNCHER_FAIL_FAST_ANNOTATION] !== undefined) args.push('--simulate-crash');
  const command = ['/usr/bin/virt-launcher-monitor'];
  if (gateEnabled(config, 'CrossArchitectureVirtualization')) command.push('--allow-cross-arch-emulation');

  const env: V1EnvVar[] = [];
  if (nonRoot) {
    env.push(...xdgEnv());
  }
  if (inputs.sharedFilesystemPaths.length > 0) env.push({ name: 'SHARED_FILESYSTEM_PATHS', value: inputs.sharedFilesystemPaths.join(':') });
  const verbosity = launcherVerbosity(vmi, config);
  if (verbosity.explicit || verbosity.value !== 2) env.push({ name: 'VIRT_LAUNCHER_LOG_VERBOSITY', value: String(verbosity.value) });
  const labels = vmi.metadata?.labels ?? {};
  if (labels['debugLogs']?.toLowerCase() === 'true' || verbosity.value > 5) env.push({ name: 'LIBVIRT_DEBUG_LOGS', value: '1' });
  if (labels['virtiofsdDebugLogs']?.toLowerCase() === 'true' || verbosity.value > 5) env.push({ name: 'VIRTIOFSD_DEBUG_LOGS', value: '1' });
  env.push({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });

  const ports = (vmi.spec.domain.devices.interfaces ?? []).flatMap((iface) =>
    (iface.ports ?? []).map((p) => ({ ...(p.name && { name: p.name }), containerPort: p.port, protocol: p.protocol || 'TCP' })));

  const container: V1Container = {
    name: COMPUTE_CONTAINER,
    image: config.launcherImage,
    imagePullPolicy: config.imagePullPolicy,
    command,
    args,
    env,
    resources: inputs.resources,
    securityContext: nonRoot
      ? {
        runAsUser: NON_ROOT_UID,
        runAsGroup: NON_ROOT_UID,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
      }
      : { runAsUser: 0, runAsNonRoot: false, capabilities: { add: ['NET_BIND_SERVICE', 'SYS_NICE'] } },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: inputs.mounts,
  };
  if (ports.length > 0) container.ports = ports;
  if (inputs.devices.length > 0) container.volumeDevices = inputs.devices;
  const liveness = wrapProbe(vmi.spec.livenessProbe, vmi, 'spec.livenessProbe');
  const readiness = wrapProbe(vmi.spec.readinessProbe, vmi, 'spec.readinessProbe');
  if (liveness) container.livenessProbe = liveness;
  if (readiness) container.readinessProbe = readiness;
  return container;
}
