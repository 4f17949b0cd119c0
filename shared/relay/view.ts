/**
 * A message's **view** (docs/scale.md, "What a message carries"): the answers to the first reads
 * a reconcile of the key will make, taken by the relay from what it watches when it sends the key
 * — the serverless counterpart of the informer cache KubeVirt's controllers read from. A function
 * that finds its read in the view skips the round trip to the API server.
 *
 * What a view may be trusted for, and what it may not (shared/reconcile/view-client.ts):
 * - it is as fresh as the relay's watches when the key was sent: like an informer, it can lag
 *   behind the API server (a write just made, an event not yet delivered), never run ahead of it;
 * - so it proves **presence**, not absence: an object it holds existed in that version; a read
 *   it answers with nothing (an absent object, an empty list) goes to the API server — unless the
 *   controller declared that read's emptiness an answer (`trustEmpty`: where KubeVirt itself acts
 *   on its informer's empty answer, guarded by expectations — a VMI not yet scheduled has no pods
 *   but the one its creation record tells of);
 * - writes are never answered from it: a status computed from a lagging object is refused by the
 *   resourceVersion it carries (409), and the retry reads from the API server;
 * - creates stay behind the expectations gate, whose consistent reads never come from a view.
 *
 * Only simple label selectors (`key`, `key=value`, joined by `,`) are answered: enough for the
 * reads controllers make by owner label, exact to evaluate against a watched store.
 */
import { resourceName, type Resource } from '../api/resources.ts';
import type { WatchedObject } from './route.ts';

/** One read a reconcile makes: a GET (`name`) or a LIST (`labelSelector`, or the whole namespace). */
export interface ViewRead {
  readonly resource: Resource<unknown>;
  readonly namespace: string;
  readonly name?: string;
  readonly labelSelector?: string;
  /**
   * An empty answer is an answer (see the header) — as long as the view's answer for this object
   * (the GET the decision was made on, e.g. the VMI whose phase made emptiness meaningful) is the
   * one the reconcile is served: a reconcile that reads that object anew (the view's was behind
   * its own last write) cannot trust the rest of the view's emptiness either.
   */
  readonly trustEmptyWith?: { readonly resource: Resource<unknown>; readonly namespace: string; readonly name: string };
}

/** The relay's watched objects, as a controller's view function sees them. */
export interface ViewSource {
  get(resource: Resource<unknown>, namespace: string, name: string): WatchedObject | undefined;
}

/** One answered read, as it travels in a message (`resource` is `plural.group`). */
export interface ViewAnswer {
  readonly resource: string;
  readonly namespace: string;
  readonly name?: string;
  readonly labelSelector?: string;
  readonly items: readonly object[];
  /** `plural.group/namespace/name` of the view object whose answer makes an empty `items` an answer. */
  readonly trustEmptyWith?: string;
}

/**
 * When a view was taken: which relay process took it (`relay`, random per start) and how many
 * watch events its store had applied then (`seq`). Two views stamped by the same relay are
 * ordered by `seq` — a store only moves forward —, whatever order their messages arrive in.
 */
export interface ViewStamp {
  readonly relay: string;
  readonly seq: number;
}

/** The reads answered for one message. */
export interface MessageView {
  readonly reads: readonly ViewAnswer[];
  /** Absent in a view no relay stamped (then no other view is known to be older or newer). */
  readonly taken?: ViewStamp;
}

/**
 * The view a key's message should carry when `newer` (arrived later) is coalesced into `older`:
 * the fresher of the two. Arrival order is not the order views were taken in — a message sent
 * again (an at-least-once retry, a duplicate) arrives after a newer one with its old view, and a
 * coalesced delivery that kept it would show the reconcile a cluster older than one the queue
 * already held, dropping the newer message's news. Two views of the same relay compare by their
 * stamps; anything else (a message without a view, another relay's, unstamped) gives no view, and
 * the reconcile reads from the API server.
 */
export function fresherView(older: MessageView | undefined, newer: MessageView | undefined): MessageView | undefined {
  if (!older || !newer) return undefined;
  if (!older.taken || !newer.taken || older.taken.relay !== newer.taken.relay) return undefined;
  return older.taken.seq > newer.taken.seq ? older : newer;
}

/** A requirement of a simple selector: the key exists (`value` undefined), or equals `value`. */
export interface LabelRequirement {
  readonly key: string;
  readonly value?: string;
}

const SIMPLE_TERM = /^([A-Za-z0-9._/-]+)(?:==?([A-Za-z0-9._-]*))?$/;

/** The requirements of a simple selector; undefined when it uses anything else (`!=`, `in`, `!key`…). */
export function parseSimpleSelector(selector: string | undefined): LabelRequirement[] | undefined {
  if (selector === undefined || selector.trim() === '') return [];
  const out: LabelRequirement[] = [];
  for (const term of selector.split(',')) {
    const m = SIMPLE_TERM.exec(term.trim());
    if (!m) return undefined;
    out.push(m[2] === undefined ? { key: m[1]! } : { key: m[1]!, value: m[2] });
  }
  return out;
}

/** True when `labels` meet every requirement. */
export function meetsRequirements(reqs: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  return reqs.every((r) => (r.value === undefined ? labels?.[r.key] !== undefined : labels?.[r.key] === r.value));
}

/** The wire name of a read's resource. */
export function viewResourceName(resource: Resource<unknown>): string {
  return resourceName(resource);
}

/**
 * The answer of `view` to a read, if it holds one. Absent reads and empty lists are not answers
 * (see the header), unless the answer names an object whose own answer `served` says the
 * reconcile is given (`trustEmptyWith`).
 */
export function answerOf(view: MessageView, resource: string, namespace: string, read: { name?: string; labelSelector?: string }, served: (id: string) => boolean = () => false): readonly object[] | undefined {
  for (const a of view.reads) {
    if (a.resource !== resource || a.namespace !== namespace) continue;
    if (read.name !== undefined ? a.name === read.name : a.name === undefined && (a.labelSelector ?? '') === (read.labelSelector ?? '')) {
      return a.items.length > 0 || (a.trustEmptyWith !== undefined && served(a.trustEmptyWith)) ? a.items : undefined;
    }
  }
  return undefined;
}

/** The id `trustEmptyWith` names an object by. */
export function viewObjectId(resource: string, namespace: string, name: string): string {
  return `${resource}/${namespace}/${name}`;
}

/** Checks the shape of a message's view (at the queue's edge); throws a message naming what is wrong. */
export function checkView(raw: unknown): MessageView {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { reads?: unknown }).reads)) throw new Error('must be an object with a reads array');
  for (const [i, a] of ((raw as { reads: unknown[] }).reads).entries()) {
    const r = a as Record<string, unknown>;
    if (typeof r !== 'object' || r === null) throw new Error(`reads[${i}] must be an object`);
    if (typeof r.resource !== 'string' || typeof r.namespace !== 'string') throw new Error(`reads[${i}] needs resource and namespace strings`);
    if (r.name !== undefined && typeof r.name !== 'string') throw new Error(`reads[${i}].name must be a string`);
    if (r.labelSelector !== undefined && typeof r.labelSelector !== 'string') throw new Error(`reads[${i}].labelSelector must be a string`);
    if (!Array.isArray(r.items) || r.items.some((o) => typeof o !== 'object' || o === null)) throw new Error(`reads[${i}].items must be an array of objects`);
    if (r.trustEmptyWith !== undefined && typeof r.trustEmptyWith !== 'string') throw new Error(`reads[${i}].trustEmptyWith must be a string`);
  }
  const taken = (raw as { taken?: unknown }).taken as Record<string, unknown> | undefined;
  if (taken !== undefined && (typeof taken !== 'object' || taken === null || typeof taken.relay !== 'string' || !Number.isSafeInteger(taken.seq))) throw new Error('taken must be { relay: string, seq: integer }');
  return raw as MessageView;
}
