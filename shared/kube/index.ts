/**
 * Kubernetes access for the functions and the relay.
 *
 * ```ts
 * const { kubeConfig, description } = loadKubeConfig();          // once per cold start
 * log.info(`kubernetes: ${description}`);
 * const kube = createKubeClient(kubeConfig);                        // shared
 * // per reconcile:
 * const calls = new ApiCallCounter();
 * const k = countingKubeClient(kube, calls);
 * const vmi = await k.get(VMIS, ns, name, { resourceVersion: message.cause.resourceVersion });
 * const pods = await k.list(PODS, ns, { labelSelector: `kubevirt.io/created-by=${vmi?.metadata?.uid}` });
 * log.info({ apiCalls: calls.total(), byCall: calls.byCall() });
 * ```
 */
export type { DeleteOptions, EventInput, InvolvedObject, JsonPatchOperation, KubeClient, KubeObject, ListOptions, ListResult, Patch, ReadOptions, Resource, Scale, Subresource, WriteOptions } from './client.ts';
export { KUBE_VERBS } from './client.ts';
export { createKubeClient, DEFAULT_EVENT_COMPONENT, eventFor, type KubeClientOptions } from './client-node.ts';
// The client-node-free implementation for the Lambda functions (docs/kube-client.md). Import it
// from http-client.ts / connection.ts directly there: this barrel loads client-node.
export { createHttpKubeClient, HttpStatusError, type HttpKubeClient, type HttpKubeClientOptions } from './http-client.ts';
export { connectionFromEnv, KUBE_ENV, KubeConnectionError, type KubeConnection } from './connection.ts';
export { ApiCallCounter, callOf, countingKubeClient, decorateKubeClient } from './call-counter.ts';
export { IN_CLUSTER_DIR, KubeConfigError, loadKubeConfig, type Authenticator, type KubeConfigSource, type LoadedKubeConfig, type LoadKubeConfigOptions } from './config.ts';
export {
  AlreadyExistsError,
  KubeInvalidError,
  KubeRequestError,
  KubeTransientError,
  NotFoundError,
  toKubeError,
  type ApiRequest,
  type StatusBody,
  type StatusCause,
  type Verb,
} from './errors.ts';
