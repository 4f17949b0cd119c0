import { createHash } from 'node:crypto';
import { CONTROLLERS, controllerInfo, isController, type Controller } from '../controllers.ts';
import { InvalidInputError } from '../errors.ts';
import { checkView, type MessageView } from '../relay/view.ts';

// The controllers that own keys live in the registry (shared/controllers.ts); re-exported here
// because every queue module speaks of them.
export { CONTROLLERS, type Controller };

/** What made the relay send a key: the watched object and event, never its contents. */
export interface Cause {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** ADDED | MODIFIED | DELETED | RELIST | REPLAY | REQUEUE | SWEEP */
  readonly event: string;
  /** Epoch milliseconds when the relay saw the event. */
  readonly seenAt: number;
}

/** A queue message, version 1: a small JSON document naming a controller's key (docs/architecture.md §2). */
export interface KeyMessage {
  readonly v: 1;
  readonly controller: Controller;
  /**
   * `namespace/name`, or a bare `name` for a controller of cluster-scoped objects (a node);
   * optionally prefixed `clusterId:`.
   */
  readonly key: string;
  readonly cause: Cause;
  /**
   * The answers to the reconcile's first reads, as the relay's watches had them when it sent the
   * key (shared/relay/view.ts); absent when the controller declares none, when it would not fit
   * (VIEW_MAX_BYTES), and on requeued or replayed messages.
   */
  readonly view?: MessageView;
}

/** The largest view a message carries (its JSON), so a message stays one 64 KiB billing unit of SQS. */
export const VIEW_MAX_BYTES = 48 * 1024;

/**
 * The key of a controller's periodic sweep (shared/reconcile/sweep.ts): not an object's key —
 * `@` is in no Kubernetes name, so it cannot collide with one — and accepted only for a
 * controller whose registry entry has a sweep.
 */
export const SWEEP_KEY = '@sweep';

/** The cause event of a sweep and of the keys it expands into. */
export const SWEEP_EVENT = 'SWEEP';

/** True when `key` is the sweep key. */
export function isSweepKey(key: string): boolean {
  return key === SWEEP_KEY;
}

/**
 * The deduplication id: key + cause uid + resourceVersion + event type. Never the key alone, or
 * a legitimate re-enqueue inside SQS's 5-minute window would be dropped. A sweep's messages add
 * the sweep's instant (`seenAt`): an unchanged object is swept again every period with the same
 * uid and resourceVersion, while a re-delivered sweep must not send its keys twice. Hashed to fit
 * SQS's 128-character limit.
 */
export function dedupId(msg: KeyMessage): string {
  const c = msg.cause;
  const sweep = c.event === SWEEP_EVENT ? `\n${c.seenAt}` : '';
  return createHash('sha256')
    .update(`${msg.controller}\n${msg.key}\n${c.uid}\n${c.resourceVersion}\n${c.event}${sweep}`)
    .digest('hex');
}

const CLUSTER = '(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?:)?';
const NAMESPACE = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const NAME = '[a-z0-9]([-a-z0-9.]*[a-z0-9])?';
const NAMESPACED_KEY_RE = new RegExp(`^${CLUSTER}${NAMESPACE}\\/${NAME}$`);
const CLUSTER_KEY_RE = new RegExp(`^${CLUSTER}${NAME}$`);

/** `namespace/name` (namespaced objects) or `name` (cluster-scoped objects), or either when undefined. */
export type KeyScope = 'namespaced' | 'cluster';

/**
 * True when `key` is a well-formed key: `namespace/name`, or a bare `name` of a cluster-scoped
 * object (a node). With `scope`, only that form.
 */
export function isKey(key: string, scope?: KeyScope): boolean {
  if (key.length > 320) return false;
  if (scope !== 'cluster' && NAMESPACED_KEY_RE.test(key)) return true;
  return scope !== 'namespaced' && CLUSTER_KEY_RE.test(key);
}

/**
 * Splits a key into namespace and name (a cluster prefix, if any, is returned separately). A
 * cluster-scoped key has namespace `''`, which the Kubernetes client reads as "no namespace".
 */
export function splitKey(key: string): { cluster?: string; namespace: string; name: string } {
  const colon = key.indexOf(':');
  const cluster = colon >= 0 ? key.slice(0, colon) : undefined;
  const rest = colon >= 0 ? key.slice(colon + 1) : key;
  const slash = rest.indexOf('/');
  const out = slash < 0 ? { namespace: '', name: rest } : { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
  return cluster === undefined ? out : { cluster, ...out };
}

/** The key of an object: `namespace/name`, or `name` when it has no namespace. */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * Validates a message body from outside (the queue). Throws {@link InvalidInputError} naming the
 * field, so the caller can dead-letter it with that reason.
 */
export function parseKeyMessage(body: string): KeyMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    throw new InvalidInputError('body', 'not JSON', 'MalformedMessage');
  }
  return checkKeyMessage(raw);
}

/**
 * The same checks on a message as an object: what a sender checks before it serializes the
 * message (a body tens of KB long with a view was parsed back only to be checked). Only plain
 * data reaches it — strings, numbers, arrays and objects — so its JSON is the same message.
 */
export function checkKeyMessage(raw: unknown): KeyMessage {
  if (typeof raw !== 'object' || raw === null) throw bad('body', 'not an object');
  const m = raw as Record<string, unknown>;
  if (m.v !== 1) throw bad('v', `unsupported message version ${JSON.stringify(m.v)}`);
  if (!isController(m.controller)) throw bad('controller', `must be one of ${CONTROLLERS.join(', ')}`);
  const info = controllerInfo(m.controller);
  const scope = info.keyScope;
  if (m.key === SWEEP_KEY) {
    if (!info.sweep) throw bad('key', `${SWEEP_KEY}: controller ${m.controller} has no sweep`);
  } else if (typeof m.key !== 'string' || !isKey(m.key, scope)) {
    throw bad('key', scope === 'cluster' ? 'must be a name (cluster-scoped)' : 'must be namespace/name');
  }
  const c = m.cause;
  if (typeof c !== 'object' || c === null) throw bad('cause', 'missing');
  const cause = c as Record<string, unknown>;
  for (const f of ['kind', 'namespace', 'name', 'uid', 'resourceVersion', 'event'] as const) {
    if (typeof cause[f] !== 'string') throw bad(`cause.${f}`, 'must be a string');
  }
  if (typeof cause.seenAt !== 'number' || !Number.isFinite(cause.seenAt)) throw bad('cause.seenAt', 'must be a number');
  if (m.view !== undefined) {
    try {
      checkView(m.view);
    } catch (err) {
      throw bad('view', (err as Error).message);
    }
  }
  return raw as KeyMessage;
}

function bad(field: string, message: string): InvalidInputError {
  return new InvalidInputError(field, message, 'MalformedMessage');
}
