/**
 * A client that writes what virt-api writes on a user's behalf. A user hot-plugs a volume into a
 * running VMI through virt-api's `addvolume` subresource, and virt-api patches the VMI's spec as
 * its own service account; a user's direct spec patch is refused by virt-api's VMI update
 * admitter, on a cluster and in the sandbox alike (sandbox/kubevirt/identity-admission.ts). Tests
 * that stand in for the subresource write through this client: its VMI writes act as
 * `kubevirt-apiserver` (impersonated, as the product impersonates `kubevirt-controller`).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { DEFAULT_KUBEVIRT_NAMESPACE, serviceAccountUser } from '../../shared/kube/kubevirt-identity.ts';

export function virtApiClient(kubeConfig: KubeConfig): KubeClient {
  return kubevirtAccountClient(kubeConfig, 'kubevirt-apiserver');
}

/** The same for another of KubeVirt's accounts (a test standing in for virt-handler's status writes uses `kubevirt-handler`). */
export function kubevirtAccountClient(kubeConfig: KubeConfig, account: 'kubevirt-apiserver' | 'kubevirt-handler'): KubeClient {
  return createKubeClient(kubeConfig, { impersonateKubeVirtController: serviceAccountUser(DEFAULT_KUBEVIRT_NAMESPACE, account) });
}
