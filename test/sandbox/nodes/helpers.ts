/**
 * Shared test plumbing for the sandbox node side: a bounded wait (never a timed assertion: it
 * only fails when the condition never holds), and VMI/launcher-pod builders shaped like what the
 * VMI controller creates (label kubevirt.io=virt-launcher, controller ownerReference to the VMI).
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { kubeConfigActingAs } from '../../../sandbox/sandbox.ts';
import { kubevirtControllerUser } from '../../../shared/kube/kubevirt-identity.ts';
import type { Pod, Vmi } from '../../../sandbox/nodes/objects.ts';

export const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const VMIS = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances' } as const;

/** Polls `probe` until it returns a value other than undefined/false; fails after `timeoutMs` real ms. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The test's clients. The tests play virt-controller's part (VMIs, hand-offs and their status
 * written by hand), so they act as its ServiceAccount: virt-api puts back a VMI status that anyone
 * else writes (sandbox/kubevirt/identity-admission.ts). Impersonated, so the requests are still
 * counted under `kc`'s identity.
 */
export function clients(kc: KubeConfig) {
  const asController = kubeConfigActingAs(kc, kubevirtControllerUser('kubevirt'));
  return { core: asController.makeApiClient(CoreV1Api), custom: asController.makeApiClient(CustomObjectsApi) };
}

/**
 * A VMI as a client sends it. virt-api's mutating webhook (emulated by the sandbox) then defaults it
 * at create: status Pending with `runtimeUser: 107` (a non-root launcher: virt-handler then needs
 * tun and vhost-net in the launcher, and a claim's volume status), the CPU model, its finalizer.
 */
export function vmiBody(name: string): Vmi {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: {
      domain: { machine: { type: 'q35' }, memory: { guest: '1Gi' }, resources: { requests: { memory: '1Gi' } }, devices: { interfaces: [{ name: 'default' }] } },
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.6.0' } }],
    },
  };
}

/**
 * A launcher pod for `vmi`, like the one the VMI controller renders (reduced): the devices its
 * virtio interface on the pod network needs (kvm, tun, vhost-net).
 */
export function launcherPod(vmi: { name: string; uid: string }, extra: Partial<NonNullable<Pod['spec']>> = {}, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: {
      generateName: `virt-launcher-${vmi.name}-`,
      namespace: 'default',
      labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': vmi.uid, 'vm.kubevirt.io/name': vmi.name, ...labels },
      annotations: { 'kubevirt.io/domain': vmi.name },
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: vmi.name, uid: vmi.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 60,
      nodeSelector: { 'kubevirt.io/schedulable': 'true', 'machine-type.node.kubevirt.io/q35': 'true' },
      containers: [
        { name: 'compute', image: 'quay.io/kubevirt/virt-launcher:v1.9.0', resources: { requests: { cpu: '100m', memory: '1300Mi' }, limits: { 'devices.kubevirt.io/kvm': '1', 'devices.kubevirt.io/tun': '1', 'devices.kubevirt.io/vhost-net': '1' } } },
        { name: 'volumecontainerdisk', image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.6.0', resources: { requests: { cpu: '10m', memory: '40M' } } },
      ],
      ...(extra as object),
    },
  };
}

/**
 * Creates a VMI and returns its name and uid. The finalizer virt-api's webhook adds is dropped at
 * once: no VMI controller runs in these tests to remove it when the VMI ends.
 */
export async function createVmi(custom: CustomObjectsApi, name: string): Promise<{ name: string; uid: string }> {
  const created = (await custom.createNamespacedCustomObject({ ...VMIS, namespace: 'default', body: vmiBody(name) })) as Vmi;
  await patchVmi(custom, name, { metadata: { finalizers: null } });
  return { name, uid: created.metadata!.uid! };
}

export async function getVmi(custom: CustomObjectsApi, name: string): Promise<Vmi> {
  return (await custom.getNamespacedCustomObject({ ...VMIS, namespace: 'default', name })) as Vmi;
}

/** Merge-patches a VMI. VMIs have no /status subresource (as in KubeVirt): status, labels and
 * finalizers change together in one write to the object itself. */
export async function patchVmi(custom: CustomObjectsApi, name: string, body: { status?: object; metadata?: object }): Promise<void> {
  await custom.patchNamespacedCustomObject({ ...VMIS, namespace: 'default', name, body }, MERGE);
}

export async function getPod(core: CoreV1Api, name: string): Promise<Pod | undefined> {
  try {
    return JSON.parse(JSON.stringify(await core.readNamespacedPod({ namespace: 'default', name }))) as Pod;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
