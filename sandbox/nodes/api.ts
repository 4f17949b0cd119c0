/**
 * How the node side talks to the API server: client-node over HTTP, nothing else. Protocol
 * notes live here so the components read like what they do (docs/kube-client.md, "client-node as it behaves on the wire").
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { pooledApiClient } from '../../shared/kube/connections.ts';
import { SharedInformers } from './shared-informers.ts';
import type { RawList } from './watched-cache.ts';
import type { Node, Pod, Vmi } from './objects.ts';

/** The clients every component gets. */
export interface NodeSideApi {
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  /** One informer per watched collection for every component given these clients (shared-informers.ts). */
  informers: SharedInformers;
}

export function nodeSideApi(kc: KubeConfig): NodeSideApi {
  // Kept connections (makeApiClient opens one per request: shared/kube/connections.ts).
  return { kc, core: pooledApiClient(kc, CoreV1Api), custom: pooledApiClient(kc, CustomObjectsApi), informers: new SharedInformers(kc) };
}

// Why explicit content types: client-node defaults every patch to json-patch+json whatever the
// body looks like (docs/kube-client.md, "client-node as it behaves on the wire").
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/**
 * Typed CoreV1Api results are model objects (Date timestamps, unknown fields dropped) while watch
 * events are raw JSON; turning list items back into JSON keeps one shape in each cache.
 */
export function plain<T>(model: unknown): T {
  return JSON.parse(JSON.stringify(model)) as T;
}

/** HTTP status of any of client-node's three error shapes, if there is one. */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** True for a 404 — the object is already gone, which callers usually count as success. */
export function isNotFound(err: unknown): boolean {
  return statusCodeOf(err) === 404;
}

export const KUBEVIRT = { group: 'kubevirt.io', version: 'v1' } as const;

/** Lists pods in all namespaces; pass the informer's label selector, or the cache would hold pods
 * its watch never updates (docs/kube-client.md, "client-node as it behaves on the wire"). */
export const listAllPods = (api: NodeSideApi, labelSelector?: string) => async (): Promise<RawList<Pod>> =>
  plain<RawList<Pod>>(await api.core.listPodForAllNamespaces(labelSelector ? { labelSelector } : {}));

export const listNodes = (api: NodeSideApi) => async (): Promise<RawList<Node>> =>
  plain<RawList<Node>>(await api.core.listNode({}));

export const listAllVmis = (api: NodeSideApi) => async (): Promise<RawList<Vmi>> =>
  (await api.custom.listClusterCustomObject({ ...KUBEVIRT, plural: 'virtualmachineinstances' })) as RawList<Vmi>;

/** Merge-patches a pod's status subresource. */
export async function patchPodStatus(api: NodeSideApi, namespace: string, name: string, body: object): Promise<void> {
  await api.core.patchNamespacedPodStatus({ namespace, name, body }, MERGE_PATCH);
}
