/**
 * The client options the product's runtimes give every controller's client (local/runtime.ts,
 * shared/runtime/lambda-env.ts): the writes virt-api judges by identity go as KubeVirt's
 * controller (shared/kube/kubevirt-identity.ts). The chaos rigs build their controllers' clients
 * themselves, so they must say the same, or the sandbox's virt-api puts their VMI status back.
 */
import type { KubeClientOptions } from '../../shared/kube/requests.ts';
import { kubevirtControllerUser } from '../../shared/kube/kubevirt-identity.ts';

export const AS_PRODUCT: KubeClientOptions = { impersonateKubeVirtController: kubevirtControllerUser() };

/**
 * {@link AS_PRODUCT}, counting in `seen` (by status, `seen429`…) the answers the client retried
 * inside the request (`Retry-After`, shared/kube/requests.ts): a chaos run's 429s that never
 * reached a reconcile as an error were still met.
 */
export function asProductCounting(seen: Record<string, number>): KubeClientOptions {
  return { ...AS_PRODUCT, retryAfter: { onRetry: ({ status }) => void (seen[`seen${status}`] = (seen[`seen${status}`] ?? 0) + 1) } };
}
