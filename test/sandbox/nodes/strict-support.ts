/**
 * Plumbing for the strict node-side suites (reference-node-side §5 scenarios, played with pods
 * and VMIs made by hand as a controller would make them): a four-node sandbox whose node01 has no
 * kvm resource and no `kubernetes.io/hostname` label and whose node02's kvm plugin has only
 * unhealthy devices, storage agents for bound claims, and readers for events and conditions.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { REAL } from '../../support/lanes.ts';
import { IMMEDIATE_CLASS, SANDBOX_CSI_DRIVER } from '../../../sandbox/storage/classes.ts';
import { clients, getPod, launcherPod, MERGE, waitFor, VMIS } from './helpers.ts';
import type { Condition, Pod, Vmi } from '../../../sandbox/nodes/objects.ts';

export const NS = 'default';
export const KVM = 'devices.kubevirt.io/kvm';
export const VHOST_VSOCK = 'devices.kubevirt.io/vhost-vsock';

/** A class of the sandbox driver whose volumes must be attached to a node (Multi-Attach applies). */
export const ATTACHABLE_CLASS = 'sandbox-csi-attachable';

/** node01: kvm unknown (no plugin) and no hostname label; node02: kvm registered, no healthy device; node03: vhost-vsock too (the VSOCK gate); node04: as shipped. */
export async function startStrictSandbox(): Promise<{ sb: Sandbox; api: ReturnType<typeof clients> }> {
  const sb = await startSandbox({
    nodes: 4,
    speed: 1000,
    nodeShapes: {
      node01: { resources: { [KVM]: null }, labels: { 'kubernetes.io/hostname': null } },
      node02: { unhealthyDevices: [KVM] },
      // virt-handler registers vhost-vsock only with the VSOCK feature gate: here on node03 alone.
      node03: { resources: { [VHOST_VSOCK]: '1k' } },
    },
    // On the real lane kube-controller-manager binds the claims the provisioner makes volumes for.
    storage: { provisionMs: 50, bindVolumes: !REAL },
  });
  const api = clients(sb.apiServer.kubeConfig('test'));
  await api.custom.createClusterCustomObject({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', body: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: ATTACHABLE_CLASS }, provisioner: SANDBOX_CSI_DRIVER, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate', parameters: { attachRequired: 'true' } } });
  return { sb, api };
}

/** A claim of the sandbox CSI class, bound to a volume of `mode`. */
export async function boundClaim(core: CoreV1Api, name: string, mode: 'Block' | 'Filesystem', access: 'ReadWriteOnce' | 'ReadWriteMany' = 'ReadWriteOnce', storageClassName = IMMEDIATE_CLASS): Promise<Pod> {
  await core.createNamespacedPersistentVolumeClaim({
    namespace: NS,
    body: { metadata: { name }, spec: { accessModes: [access], volumeMode: mode, storageClassName, resources: { requests: { storage: '1Gi' } } } },
  });
  return waitFor(`claim ${name} Bound`, async () => {
    const c = JSON.parse(JSON.stringify(await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name }))) as Pod & { spec?: { volumeName?: string } };
    return c.status?.phase === 'Bound' && c.spec?.volumeName !== undefined && c;
  }, 60_000);
}

/** A bare pod (no owner) with one container per name, `extra` merged into its spec. */
export function plainPod(name: string, extra: Record<string, unknown> = {}, containers: Record<string, unknown>[] = [{ name: 'compute', image: 'quay.io/kubevirt/virt-launcher:v1.9.0' }]): V1Pod {
  return { metadata: { name, namespace: NS }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, containers, ...extra } as unknown as V1Pod['spec'] };
}

export async function createPod(core: CoreV1Api, body: V1Pod): Promise<string> {
  const created = await core.createNamespacedPod({ namespace: NS, body });
  return created.metadata!.name!;
}

export async function podWhere(core: CoreV1Api, name: string, what: string, ok: (p: Pod) => boolean, timeoutMs = 30_000): Promise<Pod> {
  return waitFor(`pod ${name}: ${what}`, async () => {
    const p = await getPod(core, name);
    return p !== undefined && ok(p) && p;
  }, timeoutMs);
}

export const cond = (conds: Condition[] | undefined, type: string) => conds?.find((c) => c.type === type);

/** The events about an object, as `type reason: message (component)`. */
export async function eventsOf(core: CoreV1Api, name: string): Promise<{ type: string; reason: string; message: string; component: string; count: number }[]> {
  const list = await core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '', component: e.source?.component ?? e.reportingComponent ?? '', count: e.count ?? 1 }));
}

/** Waits for an event with `reason` about `name` and answers it. */
export async function eventWith(core: CoreV1Api, name: string, reason: string, timeoutMs = 30_000) {
  return waitFor(`event ${reason} on ${name}`, async () => (await eventsOf(core, name)).find((e) => e.reason === reason), timeoutMs);
}

/** A launcher pod (label, owner, compute + readiness gate) for `vmi` with the container and volume changes given. */
export function launcherFor(vmi: { name: string; uid: string }, change: { volumes?: unknown[]; mounts?: unknown[]; devices?: unknown[]; limits?: Record<string, string>; nodeName?: string; nodeSelector?: Record<string, string> } = {}): V1Pod {
  const pod = launcherPod(vmi);
  const compute = pod.spec!.containers[0]!;
  // The devices the template asks for (reference-node-side §2.2): kvm, tun, vhost-net.
  compute.resources = { ...compute.resources, limits: change.limits ?? { [KVM]: '1', 'devices.kubevirt.io/tun': '1', 'devices.kubevirt.io/vhost-net': '1' } };
  if (change.mounts) compute.volumeMounts = change.mounts as never;
  if (change.devices) compute.volumeDevices = change.devices as never;
  if (change.volumes) pod.spec!.volumes = change.volumes as never;
  if (change.nodeName) pod.spec!.nodeName = change.nodeName;
  if (change.nodeSelector) pod.spec!.nodeSelector = change.nodeSelector;
  return pod;
}

export async function vmiNow(api: ReturnType<typeof clients>, name: string): Promise<Vmi> {
  return (await api.custom.getNamespacedCustomObject({ ...VMIS, namespace: NS, name })) as Vmi;
}

export async function vmiWhere(api: ReturnType<typeof clients>, name: string, what: string, ok: (v: Vmi) => boolean, timeoutMs = 30_000): Promise<Vmi> {
  return waitFor(`VMI ${name}: ${what}`, async () => {
    const v = await vmiNow(api, name);
    return ok(v) && v;
  }, timeoutMs);
}

/** Creates a VMI with this spec (and status, kept on create: VMIs have no /status subresource). */
export async function makeVmi(api: ReturnType<typeof clients>, name: string, spec: Record<string, unknown>, status: Record<string, unknown> = {}, annotations: Record<string, string> = {}): Promise<{ name: string; uid: string }> {
  const created = (await api.custom.createNamespacedCustomObject({
    ...VMIS,
    namespace: NS,
    body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS, annotations }, spec, status },
  })) as Vmi;
  return { name, uid: created.metadata!.uid! };
}

/** The VMI controller's hand-off, played by hand: phase, node, label, activePods and what else the controller writes. */
export async function handOff(api: ReturnType<typeof clients>, name: string, pod: Pod, status: Record<string, unknown> = {}, labelled = true): Promise<void> {
  const node = pod.spec!.nodeName!;
  await api.custom.patchNamespacedCustomObject(
    { ...VMIS, namespace: NS, name, body: { metadata: labelled ? { labels: { 'kubevirt.io/nodeName': node } } : {}, status: { phase: 'Scheduled', nodeName: node, activePods: { [pod.metadata!.uid!]: node }, ...status } } },
    MERGE,
  );
}

export async function runningPod(core: CoreV1Api, body: V1Pod): Promise<Pod> {
  const name = await createPod(core, body);
  return podWhere(core, name, 'Running', (p) => p.status?.phase === 'Running');
}

export type { Sandbox };
