/**
 * What keeps a bound pod's volumes from being set up, as the kubelet's volume manager and the
 * attach/detach controller find it, as a pure function (Kubernetes `pkg/kubelet/volumemanager/
 * populator/desired_state_of_world_populator.go` `createVolumeSpec`, `getPVCExtractPV`,
 * `getPVSpec`; `volumemanager/volume_manager.go` `WaitForAttachAndMount`; the configMap and secret
 * volume plugins' `SetUp`; `pkg/controller/volume/attachdetach/reconciler` `reportMultiAttachError`).
 * Only volumes a container mounts or maps count, as upstream ignores the others.
 *
 * - a claim that cannot be processed (missing, unbound, being deleted, its PV missing or bound to
 *   another claim, or its volume mode not the way a container uses it): the populator's error;
 *   `WaitForAttachAndMount` gives up at once and the kubelet reports the aggregate `FailedMount`;
 * - a configMap or secret volume whose object is missing and not `optional`: the mount fails,
 *   `FailedMount` "MountVolume.SetUp failed for volume …";
 * - an attachable ReadWriteOnce (or ReadWriteOncePod) volume still attached to another node for a
 *   pod there: the attach/detach controller's `FailedAttachVolume` "Multi-Attach error …" (a
 *   volume that needs no attach, like the sandbox classes' and hostpath-provisioner's, has none).
 *
 * Any of them keeps the pod `Pending` with its containers waiting in `ContainerCreating`.
 */
import type { Pod } from './objects.ts';
import { ATTACH_REQUIRED_ANNOTATION } from '../storage/objects.ts';

/** The parts of a claim the checks read. */
export interface ClaimFacts {
  metadata?: { uid?: string; deletionTimestamp?: string };
  spec?: { volumeName?: string; accessModes?: string[] };
  status?: { phase?: string };
}

/** The parts of a PersistentVolume the checks read. */
export interface VolumeFacts {
  metadata?: { annotations?: Record<string, string> };
  spec?: { volumeMode?: string; accessModes?: string[]; claimRef?: { uid?: string } };
}


export interface VolumeLookups {
  claim(namespace: string, name: string): ClaimFacts | undefined;
  volume(name: string): VolumeFacts | undefined;
  configMapExists(namespace: string, name: string): boolean;
  secretExists(namespace: string, name: string): boolean;
  /** Names of running pods on other nodes than `nodeName` that use this claim. */
  usersElsewhere(namespace: string, claimName: string, nodeName: string): string[];
}

export interface VolumeProblems {
  /** Populator errors by pod volume name (in pod volume order). */
  process: { volume: string; message: string }[];
  /** Mount set-up errors (configMap/secret missing). */
  setup: { volume: string; message: string }[];
  /** Attach errors (Multi-Attach), by PV name. */
  attach: { volume: string; message: string }[];
}

interface PodVolume {
  name: string;
  persistentVolumeClaim?: { claimName?: string };
  configMap?: { name?: string; optional?: boolean };
  secret?: { secretName?: string; optional?: boolean };
  projected?: { sources?: { secret?: { name?: string; optional?: boolean } }[] };
}

interface ContainerVolumes {
  volumeMounts?: { name: string }[];
  volumeDevices?: { name: string }[];
}

/** The pod volumes containers mount (`mounts`) and map as block devices (`devices`). */
export function usedVolumes(pod: Pod): { mounts: Set<string>; devices: Set<string> } {
  const mounts = new Set<string>();
  const devices = new Set<string>();
  const containers = [...((pod.spec?.initContainers ?? []) as ContainerVolumes[]), ...((pod.spec?.containers ?? []) as ContainerVolumes[])];
  for (const c of containers) {
    for (const m of c.volumeMounts ?? []) mounts.add(m.name);
    for (const d of c.volumeDevices ?? []) devices.add(d.name);
  }
  return { mounts, devices };
}

const exclusive = (modes: string[] | undefined) => {
  const m = modes ?? [];
  return m.length > 0 && m.every((x) => x === 'ReadWriteOnce' || x === 'ReadWriteOncePod');
};

/** The claim's problem as the populator words it, or its bound PV and volume mode. */
function processClaim(pod: Pod, vol: PodVolume, used: { mounts: Set<string>; devices: Set<string> }, l: VolumeLookups): { error: string } | { pvName: string; claim: ClaimFacts; pv: VolumeFacts } {
  const ns = pod.metadata?.namespace ?? '';
  const claimName = vol.persistentVolumeClaim?.claimName ?? '';
  const wrap = (e: string) => ({ error: `error processing PVC ${ns}/${claimName}: ${e}` });
  const claim = l.claim(ns, claimName);
  if (!claim) return wrap(`failed to fetch PVC from API server: persistentvolumeclaims "${claimName}" not found`);
  if (claim.metadata?.deletionTimestamp) return wrap('PVC is being deleted');
  if (claim.status?.phase !== 'Bound') return wrap('PVC is not bound');
  const pvName = claim.spec?.volumeName ?? '';
  if (!pvName) return wrap('PVC has empty pvc.Spec.VolumeName');
  const pv = l.volume(pvName);
  if (!pv) return wrap(`failed to fetch PV ${pvName} from API server: persistentvolumes "${pvName}" not found`);
  const ref = pv.spec?.claimRef;
  if (!ref) return wrap(`found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
  if (ref.uid !== claim.metadata?.uid) return wrap(`found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${ref.uid ?? ''} does not point to claim.UID ${claim.metadata?.uid ?? ''}`);
  // A PV without a volume mode is a filesystem.
  const mode = pv.spec?.volumeMode ?? 'Filesystem';
  if (used.mounts.has(vol.name) && mode !== 'Filesystem') return { error: `volume ${vol.name} has volumeMode ${mode}, but is specified in volumeMounts` };
  if (used.devices.has(vol.name) && mode !== 'Block') return { error: `volume ${vol.name} has volumeMode ${mode}, but is specified in volumeDevices` };
  return { pvName, claim, pv };
}

/** Everything that keeps the pod's volumes from being ready on `nodeName`. */
export function volumeProblems(pod: Pod, nodeName: string, l: VolumeLookups): VolumeProblems {
  const ns = pod.metadata?.namespace ?? '';
  const used = usedVolumes(pod);
  const out: VolumeProblems = { process: [], setup: [], attach: [] };
  for (const vol of ((pod.spec?.volumes ?? []) as PodVolume[])) {
    if (!used.mounts.has(vol.name) && !used.devices.has(vol.name)) continue;
    if (vol.persistentVolumeClaim) {
      const r = processClaim(pod, vol, used, l);
      if ('error' in r) {
        out.process.push({ volume: vol.name, message: r.error });
        continue;
      }
      if (r.pv.metadata?.annotations?.[ATTACH_REQUIRED_ANNOTATION] === 'true' && exclusive(r.claim.spec?.accessModes ?? r.pv.spec?.accessModes)) {
        const others = l.usersElsewhere(ns, vol.persistentVolumeClaim.claimName ?? '', nodeName).filter((n) => n !== pod.metadata?.name);
        if (others.length > 0) out.attach.push({ volume: r.pvName, message: `Multi-Attach error for volume "${r.pvName}" Volume is already used by pod(s) ${others.sort().join(', ')}` });
      }
      continue;
    }
    const setupFailed = (what: string) => out.setup.push({ volume: vol.name, message: `MountVolume.SetUp failed for volume "${vol.name}" : ${what}` });
    if (vol.configMap?.name && vol.configMap.optional !== true && !l.configMapExists(ns, vol.configMap.name)) setupFailed(`configmap "${vol.configMap.name}" not found`);
    if (vol.secret?.secretName && vol.secret.optional !== true && !l.secretExists(ns, vol.secret.secretName)) setupFailed(`secret "${vol.secret.secretName}" not found`);
    for (const s of vol.projected?.sources ?? []) {
      if (s.secret?.name && s.secret.optional !== true && !l.secretExists(ns, s.secret.name)) setupFailed(`secret "${s.secret.name}" not found`);
    }
  }
  return out;
}

/** True when nothing keeps the volumes back. */
export function volumesReady(p: VolumeProblems): boolean {
  return p.process.length === 0 && p.setup.length === 0 && p.attach.length === 0;
}

/** The kubelet's aggregate `FailedMount` text for populator errors (`SyncPod` → `WaitForAttachAndMount`). */
export function failedMountMessage(p: VolumeProblems): string {
  const failed = p.process.map((e) => e.volume).sort();
  const unmounted = [...new Set([...failed, ...p.setup.map((e) => e.volume)])].sort();
  return `Unable to attach or mount volumes: unmounted volumes=[${unmounted.join(' ')}], unattached volumes=[], failed to process volumes=[${failed.join(' ')}]: ${p.process.map((e) => e.message).join('; ')}`;
}
