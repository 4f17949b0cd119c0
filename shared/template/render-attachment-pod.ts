/**
 * The hotplug attachment pod (reference §b.9): one small pod on the launcher's node that mounts
 * the hotplugged PVCs so virt-handler can hand them to the running guest. Owned by the launcher
 * pod; names the VMI in annotations.
 */
import type { V1ObjectMeta, V1PersistentVolumeClaim, V1Pod, V1Toleration, V1Volume, V1VolumeDevice, V1VolumeMount } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import {
  APP_LABEL, EPHEMERAL_PROVISIONING_ANNOTATION, HOSTNAME_NODE_LABEL, HOTPLUG_DISK_APP, NON_ROOT_UID, OWNER_VMI_NAME_ANNOTATION, OWNER_VMI_UID_ANNOTATION,
} from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { selinuxLevel } from './render-target-pod.ts';
import { hotplugDiskResources } from './support-containers.ts';
import { vmiName, vmiUid } from './vmi-traits.ts';

/** A hotplugged volume to attach, with what is known about its claim. */
export interface AttachmentVolume {
  /** The VMI volume name. */
  name: string;
  claimName: string;
  /** The PVC's UID (block devices are exposed at `/path/<vol>/<pvcUID>`). */
  claimUid?: string;
  volumeMode?: 'Block' | 'Filesystem';
  /**
   * virt-handler already uses it (status phase `Ready` or `MountedToPod`): a filesystem volume is
   * then not mounted into the new pod again, only listed as a pod volume.
   */
  mounted?: boolean;
}

/**
 * A hotplug volume as the attachment pod needs it, from its claim (UID and volume mode) and its
 * VMI volume status phase (`Ready` / `MountedToPod`: virt-handler already uses it). The migration
 * controller passes no phase: a target pod's attachment pod mounts every volume.
 */
export function attachmentVolume(volume: { readonly name: string; readonly claimName: string }, pvc: V1PersistentVolumeClaim | undefined, phase?: string): AttachmentVolume {
  return {
    name: volume.name,
    claimName: volume.claimName,
    ...(pvc?.metadata?.uid ? { claimUid: pvc.metadata.uid } : {}),
    ...(pvc?.spec?.volumeMode === 'Block' ? { volumeMode: 'Block' as const } : {}),
    ...(phase === 'Ready' || phase === 'MountedToPod' ? { mounted: true } : {}),
  };
}

const DEFAULT_TOLERATIONS: V1Toleration[] = [
  'node.kubernetes.io/unschedulable', 'node.kubernetes.io/network-unavailable', 'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/pid-pressure',
].map((key) => ({ key, operator: 'Exists', effect: 'NoSchedule' }));

/** `hp-volume-` pods' metadata: the label, the owner-VMI annotations, the launcher pod as controller. */
function hotplugPodMetadata(launcherPod: V1Pod, vmi: VirtualMachineInstance, annotations: Record<string, string>): V1ObjectMeta {
  const name = launcherPod.metadata?.name;
  const uid = launcherPod.metadata?.uid;
  if (!name) throw new InvalidInputError('launcherPod.metadata.name', 'is required');
  if (!uid) throw new InvalidInputError('launcherPod.metadata.uid', 'is required');
  return {
    generateName: 'hp-volume-',
    ...(launcherPod.metadata?.namespace && { namespace: launcherPod.metadata.namespace }),
    labels: { [APP_LABEL]: HOTPLUG_DISK_APP },
    annotations: { [OWNER_VMI_NAME_ANNOTATION]: vmiName(vmi), [OWNER_VMI_UID_ANNOTATION]: vmiUid(vmi), ...annotations },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid, controller: true, blockOwnerDeletion: true }],
  };
}


/**
 * The attachment pod's SELinux level (KubeVirt's `matchSELinuxLevelOfVMI`): `s0` by default, the
 * VMI's own level when it has an SELinux context other than `none`; while the VMI has none yet,
 * its migration source's (a target being prepared). No context at all, or one without a level,
 * refuses the render with KubeVirt's words.
 */
function attachmentSelinuxLevel(vmi: VirtualMachineInstance): string {
  let context = vmi.status?.selinuxContext;
  if (!context) {
    context = vmi.status?.migrationState?.sourceState?.selinuxContext;
    if (!context) throw new InvalidInputError('status.selinuxContext', 'VMI is missing SELinux context');
  }
  if (context === 'none') return 's0';
  const level = selinuxLevel(context);
  if (!level) throw new InvalidInputError('status.selinuxContext', `VMI has invalid SELinux context: ${context}`);
  return level;
}

/** The attachment pod for `volumes` of `vmi`, whose launcher pod is `launcherPod` (running on a node). */
export function renderAttachmentPod(
  volumes: AttachmentVolume[],
  launcherPod: V1Pod,
  vmi: VirtualMachineInstance,
  config: ClusterConfig,
): V1Pod {
  const node = launcherPod.spec?.nodeName;
  if (!node) throw new InvalidInputError('launcherPod.spec.nodeName', 'is required: the launcher must be scheduled');
  const level = attachmentSelinuxLevel(vmi);

  const podVolumes: V1Volume[] = [{ name: 'hotplug-disks', emptyDir: {} }];
  const mounts: V1VolumeMount[] = [{ name: 'hotplug-disks', mountPath: '/path', mountPropagation: 'HostToContainer' }];
  const devices: V1VolumeDevice[] = [];
  const seen = new Set<string>(['hotplug-disks']);
  for (const [i, v] of volumes.entries()) {
    if (!v.name || !v.claimName) throw new InvalidInputError(`volumes[${i}]`, 'needs a name and a claimName');
    if (seen.has(v.name)) throw new InvalidInputError(`volumes[${i}].name`, `duplicate volume '${v.name}'`);
    seen.add(v.name);
    podVolumes.push({ name: v.name, persistentVolumeClaim: { claimName: v.claimName } });
    if (v.volumeMode === 'Block') {
      if (!v.claimUid) throw new InvalidInputError(`volumes[${i}].claimUid`, 'is required for block volumes');
      devices.push({ name: v.name, devicePath: `/path/${v.name}/${v.claimUid}` });
    } else if (!v.mounted) {
      mounts.push({ name: v.name, mountPath: `/${v.name}` });
    }
  }

  // Defaults first, then the launcher's; sorted by key and deduplicated as KubeVirt does.
  const tolerations: V1Toleration[] = [];
  for (const t of [...DEFAULT_TOLERATIONS, ...(launcherPod.spec?.tolerations ?? [])]) {
    if (!tolerations.some((u) => JSON.stringify(u) === JSON.stringify(t))) tolerations.push(t);
  }
  tolerations.sort((a, b) => (a.key ?? '').localeCompare(b.key ?? ''));

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: hotplugPodMetadata(launcherPod, vmi, {}),
    spec: {
      containers: [{
        name: 'hotplug-disk',
        image: config.launcherImage,
        imagePullPolicy: config.imagePullPolicy,
        command: ['/bin/sh', '-c', '/usr/bin/container-disk --copy-path /path/hp'],
        resources: hotplugDiskResources(config),
        securityContext: {
          runAsUser: NON_ROOT_UID,
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          seccompProfile: { type: 'RuntimeDefault' },
          capabilities: { drop: ['ALL'] },
          seLinuxOptions: { ...(config.selinuxLauncherType && { type: config.selinuxLauncherType }), level },
        },
        volumeMounts: mounts,
        ...(devices.length > 0 && { volumeDevices: devices }),
      }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_NODE_LABEL, operator: 'In', values: [node] }] }],
          },
        },
      },
      tolerations,
      volumes: podVolumes,
      terminationGracePeriodSeconds: 0,
    },
  };
}

/**
 * The hotplug trigger pod (reference §b.9): a pod that only exists so that a WaitForFirstConsumer
 * claim being hotplugged gets bound on the launcher's node. Same metadata as the attachment pod
 * plus `kubevirt.io/ephemeral-provisioning: "true"`; it exits at once.
 */
export function renderHotplugTriggerPod(volume: AttachmentVolume, launcherPod: V1Pod, vmi: VirtualMachineInstance, config: ClusterConfig): V1Pod {
  if (!volume.name || !volume.claimName) throw new InvalidInputError('volume', 'needs a name and a claimName');
  const block = volume.volumeMode === 'Block';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: hotplugPodMetadata(launcherPod, vmi, { [EPHEMERAL_PROVISIONING_ANNOTATION]: 'true' }),
    spec: {
      containers: [{
        name: 'hotplug-disk',
        image: config.launcherImage,
        imagePullPolicy: config.imagePullPolicy,
        command: ['/bin/bash', '-c', 'exit', '0'],
        resources: hotplugDiskResources(config),
        ...(block ? { volumeDevices: [{ name: volume.name, devicePath: '/dev/hotplugblockdevice' }] } : { volumeMounts: [{ name: volume.name, mountPath: '/pvc' }] }),
      }],
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { ...launcherPod.metadata?.labels } }, topologyKey: HOSTNAME_NODE_LABEL }],
        },
      },
      ...(launcherPod.spec?.tolerations ? { tolerations: structuredClone(launcherPod.spec.tolerations) } : {}),
      ...(block ? { securityContext: { runAsUser: 0 } } : {}),
      restartPolicy: 'Never',
      volumes: [{ name: volume.name, persistentVolumeClaim: { claimName: volume.claimName } }],
      terminationGracePeriodSeconds: 0,
    },
  };
}
