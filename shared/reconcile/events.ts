/**
 * The one event recorder of the reconciles: best effort, as client-go's recorder treats Events —
 * a failed event is logged and never fails the reconcile that emits it (a worker crash still
 * crashes: a process that dies does not get to log). A controller makes its recorder for the
 * kind of object its events are about with {@link eventRecorder}.
 */
import { errorText } from '../errors.ts';
import type { InvolvedObject, KubeClient } from '../kube/client.ts';
import type { ReconcileLogger } from '../metrics/log.ts';
import { KIND_VMI, KUBEVIRT_API_VERSION } from '../api/well-known.ts';
import { isWorkerCrash } from './worker-crash.ts';
import type { EventComponent } from './event-components.ts';

/** What an object needs to be an event's subject. */
interface Subject {
  metadata?: { name?: string | undefined; namespace?: string | undefined; uid?: string | undefined } | undefined;
}

/** The involved-object reference of `obj`, an object of `apiVersion` and `kind`. */
export function objectRef(apiVersion: string, kind: string, obj: Subject): InvolvedObject {
  return { apiVersion, kind, namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid };
}

/** The involved-object reference of a KubeVirt object of `kind` (default VirtualMachineInstance). */
export function kubevirtRef(obj: Subject, kind: string = KIND_VMI): InvolvedObject {
  return objectRef(KUBEVIRT_API_VERSION, kind, obj);
}

/** The involved-object reference of a Node (cluster-scoped: its events go to `default`). */
export function nodeRef(node: Subject): InvolvedObject {
  return { apiVersion: 'v1', kind: 'Node', name: node.metadata?.name ?? '', uid: node.metadata?.uid };
}

/**
 * Records one Event as `component` (the emitting controller's source, event-components.ts);
 * a failure is logged as a warning and swallowed.
 */
export async function recordEvent(
  deps: { readonly kube: Pick<KubeClient, 'createEvent'>; readonly log: ReconcileLogger },
  involvedObject: InvolvedObject,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  component: EventComponent,
): Promise<void> {
  try {
    await deps.kube.createEvent({ involvedObject, type, reason, message, component });
  } catch (err) {
    if (isWorkerCrash(err)) throw err;
    deps.log.warn('could not record event', { reason, error: errorText(err) });
  }
}

/** What a recorder needs of a controller's deps. */
export interface EventDeps {
  readonly kube: Pick<KubeClient, 'createEvent'>;
  readonly log: ReconcileLogger;
}

/** Records an Event about one object of the recorder's kind. */
export type EventRecorder = (deps: EventDeps, obj: Subject, type: 'Normal' | 'Warning', reason: string, message: string) => Promise<void>;

/** The recorder of Events about objects of `apiVersion` and `kind`, emitted as `component`. */
export function eventRecorder(apiVersion: string, kind: string, component: EventComponent): EventRecorder {
  return (deps, obj, type, reason, message) => recordEvent(deps, objectRef(apiVersion, kind, obj), type, reason, message, component);
}

