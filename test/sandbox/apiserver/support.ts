/**
 * Helpers for the API server conformance suite: a started API server with client-node clients,
 * Status-body extraction from ApiException, and a watch collector. The suite runs against the
 * emulator, or with VR_CONTROL_PLANE=real against the real kube-apiserver (docs/control-plane.md):
 * what only the emulator has (its knobs, fault injection, the controllable clock) is marked with
 * {@link emulatorOnly} and skipped there, saying why.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { ApiException, CoreV1Api, CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../../sandbox/apiserver/index.ts';
import { startRealApiServer } from '../../../sandbox/real/control-plane.ts';
import { REAL } from '../../support/lanes.ts';

export { emulatorOnly, REAL } from '../../support/lanes.ts';

/** An emulator plus typed and custom-object clients as "admin". */
export interface Sandbox {
  server: ApiServer;
  kc: KubeConfig;
  core: CoreV1Api;
  co: CustomObjectsApi;
}

/** The emulator with `opts`, or (VR_CONTROL_PLANE=real) the real control plane, which has no such knobs. */
export async function startSandbox(opts: ApiServerOptions = {}): Promise<Sandbox> {
  const server = REAL ? await startRealApiServer(opts.clock ? { clock: opts.clock } : {}) : await startApiServer(opts);
  const kc = server.kubeConfig();
  return { server, kc, core: kc.makeApiClient(CoreV1Api), co: kc.makeApiClient(CustomObjectsApi) };
}

/** What {@link apiFetch} answers: the parts of a fetch Response the tests read. */
export interface RawResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/**
 * A raw HTTP request to the API server as `identity` (default admin): plain fetch on the
 * emulator, TLS with the cluster's CA and the identity's bearer token on the real control plane
 * (whose discovery and object paths need an authenticated user).
 */
export async function apiFetch(sb: Sandbox, path: string, init: { method?: string; body?: string; headers?: Record<string, string>; identity?: string } = {}): Promise<RawResponse> {
  const kc = init.identity ? sb.server.kubeConfig(init.identity) : sb.kc;
  const url = new URL(path, sb.server.url);
  const options: RequestOptions = { method: init.method ?? 'GET', headers: { ...init.headers } };
  await kc.applyToHTTPSOptions(options);
  const transport = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolvePromise, reject) => {
    const req = transport(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolvePromise({
          status: res.statusCode ?? 0,
          headers: { get: (name) => { const v = res.headers[name.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v; } },
          text: async () => text,
          json: async () => JSON.parse(text) as unknown,
        });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * The cluster's current resourceVersion, as a list answers it (on both control planes a list
 * without resourceVersion carries the newest one: the emulator's global counter, etcd's revision).
 */
export async function currentResourceVersion(sb: Sandbox): Promise<bigint> {
  const list = await sb.core.listNamespace({ limit: 1 });
  return BigInt(list.metadata!.resourceVersion!);
}

/**
 * Waits for the cluster's controllers (garbage collector, namespace lifecycle) to have acted:
 * on the emulator its in-process controllers settle at once; on the real control plane
 * kube-controller-manager works asynchronously, so `cond` is polled.
 */
export async function settled(sb: Sandbox, cond: () => Promise<boolean>, what: string): Promise<void> {
  if (!REAL) await sb.server.control.settle();
  await eventually(cond, what);
}

/** The kubevirt.io/v1 VMI coordinates for CustomObjectsApi calls. */
export const VMI = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances' } as const;
/** The kubevirt.io/v1 VirtualMachine coordinates (a KubeVirt kind that does have `/status`). */
export const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;
export const MIGRATION = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstancemigrations' } as const;

/** A raw VMI object as CustomObjectsApi returns it. */
export interface RawObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    labels?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    ownerReferences?: Array<{ uid: string; name: string }>;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

export function vmiBody(name: string, extra: Partial<RawObject['metadata']> = {}): object {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, ...extra }, spec: VMI_SPEC };
}

/** The smallest VMI spec KubeVirt's CRD schema accepts (spec.domain is required). */
export const VMI_SPEC = { domain: { devices: {} } };

/**
 * A VirtualMachine body that KubeVirt's CRD schema accepts (spec.template is required). Fields
 * outside the schema would be pruned by the real server, so tests change `runStrategy`.
 */
export function vmBody(name: string, spec: Record<string, unknown> = {}, rest: Record<string, unknown> = {}): object {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name }, spec: { template: { spec: VMI_SPEC }, ...spec }, ...rest };
}

export function podBody(name: string, extra: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): object {
  return { metadata: { name, ...extra }, spec: { containers: [{ name: 'compute', image: 'virt-launcher:v1' }], ...spec } };
}

export async function createVmi(sb: Sandbox, name: string, extra: Partial<RawObject['metadata']> = {}, namespace = 'default'): Promise<RawObject> {
  return (await sb.co.createNamespacedCustomObject({ ...VMI, namespace, body: vmiBody(name, extra) })) as RawObject;
}

export async function getVmi(sb: Sandbox, name: string, namespace = 'default'): Promise<RawObject> {
  return (await sb.co.getNamespacedCustomObject({ ...VMI, namespace, name })) as RawObject;
}

/** The parsed Status body of a failed call (fails the test when the call succeeds). */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) return JSON.parse(err.body as string);
    throw err;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** One event as a watch delivered it. */
export interface SeenEvent {
  type: string;
  name: string;
  rv: string;
  obj: RawObject;
}

/** Opens a raw client-node Watch and records events; `until(n)` waits for n events. */
export async function collectWatch(kc: KubeConfig, path: string, query: Record<string, string | boolean | number>) {
  const events: SeenEvent[] = [];
  let ended: unknown = undefined;
  let endedFlag = false;
  const waiters: Array<() => void> = [];
  const notify = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const req = await new Watch(kc).watch(
    path,
    query,
    (type, obj: RawObject) => {
      events.push({ type, name: obj.metadata?.name, rv: obj.metadata?.resourceVersion, obj });
      notify();
    },
    (err) => {
      ended = err;
      endedFlag = true;
      notify();
    },
  );
  const waitFor = async (cond: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 5000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; saw ${JSON.stringify(events.map((e) => `${e.type} ${e.name}`))}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  return {
    events,
    until: (n: number) => waitFor(() => events.length >= n, `${n} events`),
    ended: () => waitFor(() => endedFlag, 'the watch to end').then(() => ended),
    isEnded: () => endedFlag,
    stop: () => req.abort(),
  };
}

/** Polls `cond` (for asynchronous cascades observed only through the API); longer on the real lane, whose controllers are other processes. */
export async function eventually(cond: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + (REAL ? 60_000 : 5000);
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
