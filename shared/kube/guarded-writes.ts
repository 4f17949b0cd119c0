/**
 * Write wrappers for the cutover (docs/cutover.md), beside api-write.ts: every write of every
 * controller goes through the per-reconcile client, and every virt-api subresource call through
 * the controller's virt-api client, so these decorators are the only places that decide what
 * reaches the API server and virt-api.
 *
 * - {@link fencedKubeClient}: each write first asks the cutover gate (a cached read of
 *   virt-controller's Lease); a write the gate does not allow is never sent ({@link FencedError}).
 * - {@link shadowKubeClient}: each write goes to a dry-run client (`dryRun=All`, see
 *   requests.ts) and is handed, with the API server's answer, to a recorder that compares it
 *   with what the live virt-controller does.
 * - {@link guardedVirtApi}: virt-api's subresource PUTs (freeze, unfreeze, backup, stop) have no
 *   dry run: a shadow reconcile's are not sent, a fenced one's are refused.
 */
import { EVENTS, PODS, type Resource } from '../api/resources.ts';
import type { WriteMode } from '../cutover/gate.ts';
import { isShadowed } from '../cutover/shadow-state.ts';
import { decorateKubeClient } from './call-counter.ts';
import type { KubeClient } from './client.ts';
import type { Verb } from './errors.ts';
import type { VirtApiClient } from './virt-api.ts';

/** A write refused because this process may not write now (the Lease is someone else's). */
export class FencedError extends Error {
  constructor(what: string) {
    super(`not written: ${what}: virt-controller's Lease is not ours to write under`);
    this.name = 'FencedError';
  }
}

const WRITES = new Set<keyof KubeClient>(['create', 'update', 'patch', 'delete', 'updateScale', 'createEvent', 'evict']);

/** `inner` whose writes are sent only while `writable()` says so. */
export function fencedKubeClient(inner: KubeClient, writable: () => Promise<boolean>): KubeClient {
  return decorateKubeClient(inner, async (method, args, call) => {
    if (!WRITES.has(method)) return call();
    if (!(await writable())) throw new FencedError(`${method} ${describeTarget(method, args)}`);
    return call();
  });
}

/**
 * `inner` under the cutover's fence (`mode`: the gate's answer; undefined: no cutover, every call
 * is sent). A call made inside a shadow reconcile is not sent — virt-api's subresources take no
 * dry run, and a shadow must not freeze a guest, abort a backup or stop a VM — and the reconcile
 * goes on as if virt-api had accepted it; outside one, a call the gate does not allow is refused
 * with {@link FencedError}.
 */
export function guardedVirtApi(inner: VirtApiClient, mode: (() => Promise<WriteMode>) | undefined): VirtApiClient {
  if (!mode) return inner;
  return {
    async put(target, namespace, name, verb, body) {
      if (isShadowed()) return;
      if ((await mode()) !== 'write') throw new FencedError(`put ${target}/${verb} ${namespace}/${name}`);
      return inner.put(target, namespace, name, verb, body);
    },
  };
}

/** One dry-run write: what was asked, and what the API server answered (or the error). */
export interface ShadowWrite {
  readonly verb: Verb;
  /** The client method (`evict`, `updateScale`, `createEvent` are writes too). */
  readonly method: keyof KubeClient;
  readonly resource: Resource;
  readonly subresource?: 'status' | 'scale' | 'eviction' | undefined;
  readonly namespace: string | undefined;
  /** Undefined for a generateName create (then `generateName` is set). */
  readonly name: string | undefined;
  readonly generateName?: string | undefined;
  /** The object of a create/update, the patch of a patch, the replicas of a scale. */
  readonly body: unknown;
  readonly patchType?: 'merge' | 'strategic' | 'json' | undefined;
  readonly answer: { readonly result: unknown } | { readonly error: unknown };
}

/**
 * Reads through `live`, writes through `dryRun` (a client made with `dryRun: true`); each write is
 * passed to `record` with its answer. The reconcile sees the dry run's answer, as it would a real one.
 */
export function shadowKubeClient(live: KubeClient, dryRun: KubeClient, record: (w: ShadowWrite) => void | Promise<void>): KubeClient {
  return decorateKubeClient(live, async (method, args, call) => {
    if (!WRITES.has(method)) return call();
    const send = () => (dryRun[method] as (...a: unknown[]) => Promise<unknown>).apply(dryRun, args as unknown[]);
    const w = shadowWriteOf(method, args);
    try {
      const result = await send();
      await record({ ...w, answer: { result } });
      return result;
    } catch (error) {
      await record({ ...w, answer: { error } });
      throw error;
    }
  });
}

type Meta = { metadata?: { name?: string; generateName?: string; namespace?: string } };

function shadowWriteOf(method: keyof KubeClient, args: readonly unknown[]): Omit<ShadowWrite, 'answer'> {
  switch (method) {
    case 'create':
    case 'update': {
      const obj = args[1] as Meta;
      const sub = (args[2] as { subresource?: 'status' } | undefined)?.subresource;
      return { verb: method, method, resource: args[0] as Resource, subresource: sub, namespace: obj.metadata?.namespace, name: obj.metadata?.name || undefined, generateName: obj.metadata?.name ? undefined : obj.metadata?.generateName, body: obj };
    }
    case 'patch': {
      const patch = args[3] as { type: 'merge' | 'strategic' | 'json'; body?: unknown; ops?: unknown };
      const sub = (args[4] as { subresource?: 'status' } | undefined)?.subresource;
      return { verb: 'patch', method, resource: args[0] as Resource, subresource: sub, namespace: args[1] as string | undefined, name: args[2] as string, body: patch.type === 'json' ? patch.ops : patch.body, patchType: patch.type };
    }
    case 'delete':
      return { verb: 'delete', method, resource: args[0] as Resource, namespace: args[1] as string | undefined, name: args[2] as string, body: args[3] };
    case 'updateScale':
      return { verb: 'patch', method, resource: args[0] as Resource, subresource: 'scale', namespace: args[1] as string | undefined, name: args[2] as string, body: { spec: { replicas: args[3] } }, patchType: 'merge' };
    case 'evict':
      return { verb: 'create', method, resource: PODS, subresource: 'eviction', namespace: args[0] as string, name: args[1] as string, body: undefined };
    default: {
      const e = args[0] as { involvedObject?: { namespace?: string; name?: string } };
      return { verb: 'create', method, resource: EVENTS, namespace: e.involvedObject?.namespace, name: undefined, generateName: `${e.involvedObject?.name ?? ''}.`, body: args[0] };
    }
  }
}

function describeTarget(method: keyof KubeClient, args: readonly unknown[]): string {
  const w = shadowWriteOf(method, args);
  return `${w.resource.plural}${w.subresource ? `/${w.subresource}` : ''} ${w.namespace ? `${w.namespace}/` : ''}${w.name ?? w.generateName ?? ''}`;
}
