/**
 * A reconcile's client when its message carries a view (shared/relay/view.ts): the reads the view
 * answers are served from it, everything else goes to the API server through `kube`.
 *
 * Served from the view: a GET or a LIST made "not older than" the message's cause (it carries a
 * `resourceVersion`: the read an informer-like cache may answer), whose answer the view holds and
 * is not empty, and not behind what the key's earlier passes wrote (the write fence,
 * write-fence.ts: an object older than our own last write of it, or a list that misses an object
 * we wrote). Never from it: a consistent read (no `resourceVersion`: the expectations gate's
 * re-reads), an absent object or an empty list (the view proves presence, not absence), a read of
 * something the view does not hold, any write.
 */
import { resourceName } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { reviverFor } from '../kube/requests.ts';
import { answerOf, viewObjectId, type MessageView } from '../relay/view.ts';
import { fenceId, isBehindFence, type WriteFence } from './write-fence.ts';

/** How many reads the view answered and how many it sent on (counted per reconcile). */
export interface ViewTally {
  hits: number;
  misses: number;
}

interface Meta {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string };
}

/** `kube` with `view`, checked against the key's write `fence`, in front of its reads. */
export function viewKubeClient(kube: KubeClient, view: MessageView, fence: WriteFence = new Map(), tally: ViewTally = { hits: 0, misses: 0 }): KubeClient {
  // A view is one moment of the relay's copies, and is used whole or not at all: a pass that must
  // read one of its objects anew (the key wrote it since) would otherwise see that object as it is
  // now beside the others as they were — a VMI Scheduled beside its pod not yet bound. A
  // duplicate delivery of an early message, arriving after later passes wrote, is such a case.
  if (view.reads.some((a) => behindFence(fence, a.resource.split('.')[0] ?? '', a.namespace, a.items, a.name === undefined))) {
    return {
      ...kube,
      get: (res, namespace, name, options) => (tally.misses++, kube.get(res, namespace, name, options)),
      list: (res, namespace, options) => (tally.misses++, kube.list(res, namespace, options)),
    };
  }
  // A view object the reconcile is served (the view is whole: every held object is).
  const served = (id: string): boolean => view.reads.some((r) => r.name !== undefined && r.items.length === 1 && viewObjectId(r.resource, r.namespace, r.name) === id);
  return {
    ...kube,
    get: async (res, namespace, name, options) => {
      const answer = options?.resourceVersion !== undefined ? answerOf(view, resourceName(res), namespace ?? '', { name }) : undefined;
      if (answer) {
        tally.hits++;
        return (answer.length > 0 ? revived(res, answer[0]!) : undefined) as never;
      }
      tally.misses++;
      return kube.get(res, namespace, name, options);
    },
    list: async (res, namespace, options) => {
      const plain = options?.resourceVersion !== undefined && options.fieldSelector === undefined && options.limit === undefined && options.continue === undefined;
      const answer = plain ? answerOf(view, resourceName(res), namespace ?? '', options?.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}, served) : undefined;
      if (answer) {
        tally.hits++;
        return { items: answer.map((o) => revived(res, o)) as never[], resourceVersion: undefined };
      }
      tally.misses++;
      return kube.list(res, namespace, options);
    },
  };
}

/**
 * True when `items` (of `plural` in `namespace`) lag behind the fence: an item older than our
 * last write of it, or — for a list, whose fenced objects of that namespace are the key's own —
 * one we wrote that it does not hold.
 */
function behindFence(fence: WriteFence, plural: string, namespace: string, items: readonly object[], isList: boolean): boolean {
  if (fence.size === 0) return false;
  const held = new Map(items.map((o) => [fenceId(plural, namespace, (o as Meta).metadata?.name ?? ''), (o as Meta).metadata?.resourceVersion]));
  for (const [id, rv] of held) if (isBehindFence(fence, id, rv)) return true;
  if (!isList) return false;
  const prefix = `${plural}/${namespace}/`;
  for (const id of fence.keys()) if (id.startsWith(prefix) && !held.has(id)) return true;
  return false;
}

/** A private copy in the shape the API client gives (core timestamps as `Date`s). */
function revived(res: Parameters<typeof reviverFor>[0], obj: object): unknown {
  return reviverFor(res)(structuredClone(obj));
}
