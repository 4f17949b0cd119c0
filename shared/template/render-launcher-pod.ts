/**
 * The virt-launcher pod for a VMI (KubeVirt's `RenderLaunchManifest`, reference §b). Pure and
 * deterministic: same VMI + config + options → the same pod, byte for byte.
 *
 * The VMI is expected as the controller sees it, i.e. after the mutating webhook's defaults
 * (`applyVmiDefaults` reproduces them for VMIs that never went through an apiserver).
 */
import type { V1Container, V1Pod, V1PodSecurityContext, V1Toleration, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { ISTIO_INJECT_ANNOTATION, NON_ROOT_UID, VIRTUAL_MACHINE_UNPAUSED_CONDITION } from '../api/well-known.ts';
import { InvalidInputError, UnsupportedError } from '../errors.ts';
import { gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { memoryOverhead } from './memory-overhead.ts';
import { GRACE_PERIOD_PADDING_SECONDS, launcherVerbosity, renderComputeContainer, vmiGracePeriodSeconds } from './render-compute-container.ts';
import { podAnnotations, podHostname, podLabels, vmiControllerRef } from './render-metadata.ts';
import { renderAffinity, renderNodeSelector } from './render-placement.ts';
import { renderResources, type NamespaceInfo } from './render-resources.ts';
import { renderVolumes, type PvcInfo } from './render-volumes.ts';
import { guestConsoleLogContainer, serialConsoleLogEnabled } from './support-containers.ts';
import { renderSidecars, requestedSidecars } from './sidecars.ts';
import { virtiofsContainers } from './virtiofs.ts';
import { containerDiskContainers } from './container-disk-containers.ts';
import { reservationAntiAffinity, reservationLabels } from './persistent-reservation.ts';
import { isNonRoot, vmiName, vmiUid } from './vmi-traits.ts';

/** What the renderer may know about the VMI's surroundings. All optional. */
export interface RenderOptions {
  /** PVCs by claim name (block vs filesystem, access modes). Given → a missing claim fails with PvcNotFoundError. */
  pvcs?: Record<string, PvcInfo>;
  /** The VMI namespace's labels and ResourceQuota limits (automatic resource limits). */
  namespace?: NamespaceInfo;
  /** Image references pinned to digests, by volume name (used for migration targets). */
  imageIds?: Record<string, string>;
  /** Overrides the deterministic qemu-timeout jitter (0–119). */
  qemuTimeoutJitterSeconds?: number;
  /** Name secondary interfaces net1, net2… (old ordinal scheme). */
  ordinalInterfaces?: boolean;
  /** The backend-storage PVC (persistent TPM/EFI); required when the VMI needs one. */
  backendPvc?: string;
  /**
   * With `ExternalNetResourceInjection` off: each Multus network's device-plugin resource, from its
   * NetworkAttachmentDefinition's `k8s.v1.cni.cncf.io/resourceName` ('' for none), by network name
   * (read-cluster-facts.ts `networkResources`); one of each is requested by the compute container.
   */
  networkResources?: Record<string, string>;
}

function rejectUnsupported(vmi: VirtualMachineInstance): void {
  for (const [i, n] of (vmi.spec.networks ?? []).entries()) {
    if (n.resourceClaim) throw new UnsupportedError(`spec.networks[${i}].resourceClaim`, 'DRA networks are not supported');
  }
}

/**
 * With `permittedHostDevices` configured, every GPU and host device (other than a DRA-backed one,
 * when its gate is on) must name a permitted resource; KubeVirt refuses the pod otherwise, with
 * one sentence per device.
 */
function checkPermittedHostDevices(vmi: VirtualMachineInstance, config: ClusterConfig): void {
  const permitted = config.permittedHostDevices;
  if (!permitted) return;
  const devices = vmi.spec.domain.devices;
  const problems: string[] = [];
  for (const g of devices.gpus ?? []) {
    if (gateEnabled(config, 'GPUsWithDRA') && g.claimName !== undefined) continue;
    if (!permitted.has(g.deviceName ?? '')) problems.push(`GPU ${g.deviceName ?? ''} is not permitted in permittedHostDevices configuration`);
  }
  for (const h of devices.hostDevices ?? []) {
    if (gateEnabled(config, 'HostDevicesWithDRA') && h.claimName !== undefined) continue;
    if (!permitted.has(h.deviceName ?? '')) problems.push(`HostDevice ${h.deviceName ?? ''} is not permitted in permittedHostDevices configuration`);
  }
  if (problems.length > 0) throw new InvalidInputError('spec.domain.devices', problems.join(' '));
}

function podSecurityContext(vmi: VirtualMachineInstance, config: ClusterConfig): V1PodSecurityContext {
  const psc: V1PodSecurityContext = { fsGroup: NON_ROOT_UID };
  if (isNonRoot(vmi)) Object.assign(psc, { runAsUser: NON_ROOT_UID, runAsGroup: NON_ROOT_UID, runAsNonRoot: true });
  else psc.runAsUser = 0;
  if (config.seccompProfile) psc.seccompProfile = { ...config.seccompProfile };
  if (config.selinuxLauncherType) psc.seLinuxOptions = { type: config.selinuxLauncherType };
  return psc;
}

/** The launcher pod KubeVirt's VMI controller would create for `vmi`. */
export function renderLauncherPod(vmi: VirtualMachineInstance, config: ClusterConfig, opts: RenderOptions = {}): V1Pod {
  rejectUnsupported(vmi);
  checkPermittedHostDevices(vmi, config);
  const name = vmiName(vmi);
  const uid = vmiUid(vmi);
  const overhead = memoryOverhead(vmi, config).bytes;
  const resources = renderResources(vmi, config, overhead, opts.namespace, opts.networkResources);
  const sidecarList = requestedSidecars(vmi, config);
  const sidecars = renderSidecars(vmi, config, sidecarList);
  const vols = renderVolumes(vmi, config, {
    pvcs: opts.pvcs,
    imageIds: opts.imageIds,
    backendPvc: opts.backendPvc,
    hookSidecars: sidecarList.length > 0,
    deviceInfoPlugin: sidecarList.some((s) => s.downwardAPI === 'device-info'),
  });
  const compute = renderComputeContainer(vmi, config, {
    resources,
    // A sidecar's claim shared with the launcher is mounted last, as KubeVirt adds it.
    mounts: [...vols.mounts, ...sidecars.computeMounts],
    devices: vols.devices,
    sharedFilesystemPaths: vols.sharedFilesystemPaths,
    jitterSeconds: opts.qemuTimeoutJitterSeconds,
    hookSidecars: sidecarList.length,
  });

  const initContainers: V1Container[] = [];
  if (serialConsoleLogEnabled(vmi, config)) {
    initContainers.push(guestConsoleLogContainer(vmi, config, uid, launcherVerbosity(vmi, config).value));
  }
  // ImageVolume off: the disks are served by containers (and pre-pulled by init containers).
  const diskContainers = gateEnabled(config, 'ImageVolume') ? { containers: [], initContainers: [] } : containerDiskContainers(vmi, config, opts.imageIds);
  initContainers.push(...diskContainers.initContainers, ...vols.initContainers);

  const pullSecrets: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    const s = v.containerDisk?.imagePullSecret;
    if (s && !pullSecrets.includes(s)) pullSecrets.push(s);
  }
  const kbSecret = vmi.spec.domain.firmware?.kernelBoot?.container?.imagePullSecret;
  if (kbSecret && !pullSecrets.includes(kbSecret)) pullSecrets.push(kbSecret);
  if (config.imagePullSecret && !pullSecrets.includes(config.imagePullSecret)) pullSecrets.push(config.imagePullSecret);

  const serviceAccountVolume = (vmi.spec.volumes ?? []).find((v) => v.serviceAccount)?.serviceAccount?.serviceAccountName;
  const istio = (vmi.metadata?.annotations?.[ISTIO_INJECT_ANNOTATION] ?? '').toLowerCase() === 'true';
  const spec = vmi.spec;

  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `virt-launcher-${name}-`,
      ...(vmi.metadata?.namespace && { namespace: vmi.metadata.namespace }),
      labels: podLabels(vmi),
      annotations: podAnnotations(vmi, overhead, { ordinalInterfaces: opts.ordinalInterfaces ?? false, bindings: config.networkBindings }),
      ownerReferences: [vmiControllerRef(vmi)],
    },
    spec: {
      hostname: podHostname(vmi),
      ...(spec.subdomain && { subdomain: spec.subdomain }),
      securityContext: podSecurityContext(vmi, config),
      terminationGracePeriodSeconds: vmiGracePeriodSeconds(vmi) + 2 * GRACE_PERIOD_PADDING_SECONDS,
      restartPolicy: 'Never',
      containers: [compute, ...diskContainers.containers, ...virtiofsContainers(vmi, config), ...sidecars.containers],
      ...(initContainers.length > 0 && { initContainers }),
      nodeSelector: renderNodeSelector(vmi, config),
      // The sidecars' own volumes (ConfigMap scripts, claims) come after all others, as in KubeVirt.
      volumes: [...vols.volumes, ...sidecars.volumes],
      ...(pullSecrets.length > 0 && { imagePullSecrets: pullSecrets.map((n) => ({ name: n })) }),
      ...(spec.dnsConfig && { dnsConfig: structuredClone(spec.dnsConfig) as NonNullable<V1Pod['spec']>['dnsConfig'] }),
      ...(spec.dnsPolicy && { dnsPolicy: spec.dnsPolicy }),
      readinessGates: [{ conditionType: VIRTUAL_MACHINE_UNPAUSED_CONDITION }],
      enableServiceLinks: false,
      ...(spec.schedulerName && { schedulerName: spec.schedulerName }),
      ...(spec.tolerations && { tolerations: structuredClone(spec.tolerations) as V1Toleration[] }),
      ...(spec.topologySpreadConstraints && { topologySpreadConstraints: structuredClone(spec.topologySpreadConstraints) as V1TopologySpreadConstraint[] }),
      ...(config.defaultRuntimeClass && { runtimeClassName: config.defaultRuntimeClass }),
      // DRA: the VMI's resource claims are the pod's.
      ...((spec.resourceClaims ?? []).length > 0 && { resourceClaims: spec.resourceClaims!.map((c) => ({ name: c.name, ...(c.resourceClaimName && { resourceClaimName: c.resourceClaimName }), ...(c.resourceClaimTemplateName && { resourceClaimTemplateName: c.resourceClaimTemplateName }) })) }),
      ...(spec.priorityClassName && { priorityClassName: spec.priorityClassName }),
    },
  };
  const podSpec = pod.spec as NonNullable<V1Pod['spec']>;
  // Persistent reservation: a label per reserved claim and a required anti-affinity to it, after
  // the node affinity terms and before the preferred-architecture one, as KubeVirt adds them.
  const prLabels = reservationLabels(vmi, opts.pvcs);
  Object.assign(pod.metadata!.labels!, prLabels);
  const affinity = renderAffinity(vmi, config, reservationAntiAffinity(prLabels));
  if (affinity) podSpec.affinity = affinity;
  const sa = spec.serviceAccountName || serviceAccountVolume;
  if (sa) podSpec.serviceAccountName = sa;
  podSpec.automountServiceAccountToken = serviceAccountVolume !== undefined || istio;
  return pod;
}
