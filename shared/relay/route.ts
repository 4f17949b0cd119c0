/**
 * What a controller tells the relay (its `functions/<name>/wakes.ts`): the resources whose events
 * concern it, and how an event maps to its keys. The relay (functions/relay/) watches the union
 * of every controller's watches and runs every controller's mapper on each event. Here in
 * shared/ so that a controller's folder can declare its mapping without importing the relay.
 */
import { PODS, type Resource } from '../api/resources.ts';
import { APP_LABEL } from '../api/well-known.ts';
import type { Controller } from '../controllers.ts';

/** The kind of a watched object (`Pod`, `VirtualMachineInstance`…), as its descriptor names it. */
export type WatchedKind = string;

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RELIST';

/** The minimum a mapping reads of an object (raw JSON from the watch). */
export interface WatchedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind?: string; name?: string; uid?: string; controller?: boolean; apiVersion?: string }[];
    deletionTimestamp?: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A key of one controller. */
export interface KeyTarget {
  readonly controller: Controller;
  readonly key: string;
}

/** One watched resource: all namespaces, optionally narrowed by a label selector. */
export interface WatchSpec {
  readonly res: Resource;
  readonly labelSelector?: string;
}

/**
 * Maps an event to keys; pure apart from the small indexes it keeps (only names and UIDs, never
 * object contents). `old` is the previous object when the relay knows it. Called for every event
 * of every watched kind: a mapper answers `[]` for kinds it does not care about.
 */
export type EventMapper = (kind: WatchedKind, type: EventType, obj: WatchedObject, old?: WatchedObject) => KeyTarget[];

/** What a mapper may use besides the events: the relay's clock (the functions' clock too). */
export interface MapperEnv {
  readonly now: () => number;
}

/** A controller's part of the relay. */
export interface RelayRoute {
  readonly watches: readonly WatchSpec[];
  /** Makes the mapper (and its indexes), once per relay. */
  readonly mapper: (env: MapperEnv) => EventMapper;
}

/** Launcher, target and attachment pods: anything with the `kubevirt.io` label key. */
export const LAUNCHER_PODS: WatchSpec = { res: PODS, labelSelector: APP_LABEL };

/** The controller-reference owner of `obj` of one kind, by name. */
export function controllerRefName(obj: WatchedObject, kind: string): string | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller && r.kind === kind)?.name;
}
