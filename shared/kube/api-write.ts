/**
 * One API write as a reconcile trace records it (verb, resource, namespace/name, HTTP code), read
 * off the call's arguments, its answer or its error — so the per-reconcile call counter can keep
 * the list without any per-controller code.
 */
import { AlreadyExistsError, KubeInvalidError, NotFoundError, type Verb } from './errors.ts';

/** A write a reconcile made and the apiserver's answer. */
export interface ApiWrite {
  readonly verb: Verb;
  /** Plural resource; `…/status` when the write went to the status subresource. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  /** HTTP status; 0 when no answer came (a network failure). */
  readonly code: number;
  /** The object's resourceVersion after a successful create, update or patch. */
  readonly resourceVersion?: string;
}

export const WRITE_VERBS: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

interface Addressed {
  readonly metadata?: { readonly name?: string; readonly generateName?: string; readonly namespace?: string };
  readonly involvedObject?: { readonly name?: string; readonly namespace?: string };
}

/**
 * The write `verb resource` made with `args`, answered by `result` or failed with `error`. The
 * name comes from the answer when there is one (a `generateName` create only gets its name
 * there), from the failed request, or from the arguments.
 */
export function apiWriteOf(verb: Verb, resource: string, args: readonly unknown[], answer: { result: unknown } | { error: unknown }): ApiWrite {
  const status = args.some((a) => typeof a === 'object' && a !== null && (a as { subresource?: unknown }).subresource === 'status');
  const target = targetOf(args, answer);
  const rv = 'result' in answer ? (answer.result as { metadata?: { resourceVersion?: unknown } } | null | undefined)?.metadata?.resourceVersion : undefined;
  return {
    verb,
    resource: status ? `${resource}/status` : resource,
    ...(target.namespace ? { namespace: target.namespace } : {}),
    name: target.name,
    code: codeOf(verb, answer),
    ...(typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {}),
  };
}

function targetOf(args: readonly unknown[], answer: { result: unknown } | { error: unknown }): { namespace?: string | undefined; name: string } {
  if ('error' in answer) {
    const req = (answer.error as { request?: { namespace?: string; name?: string } } | null)?.request;
    if (req?.name) return { namespace: req.namespace, name: req.name };
  } else {
    const meta = (answer.result as Addressed | null | undefined)?.metadata;
    if (meta?.name) return { namespace: meta.namespace, name: meta.name };
  }
  // An object argument (create/update; an Event's involved object) or `(…, namespace, name, …)`.
  for (const a of args) {
    if (typeof a !== 'object' || a === null) continue;
    const o = a as Addressed;
    if (o.involvedObject?.name) return { namespace: o.involvedObject.namespace, name: o.involvedObject.name };
    const name = o.metadata?.name ?? o.metadata?.generateName;
    if (name) return { namespace: o.metadata?.namespace, name };
  }
  const strings = args.filter((a): a is string => typeof a === 'string');
  const name = strings.at(-1) ?? '';
  return strings.length > 1 ? { namespace: strings.at(-2), name } : { name };
}

const codeOf = httpCodeOf;

/** The HTTP status a call was answered with (a get answering "missing" was a 404); 0 when no answer came. */
export function httpCodeOf(verb: Verb, answer: { result: unknown } | { error: unknown }): number {
  if (!('error' in answer)) {
    if (verb === 'delete' && answer.result === false) return 404; // already gone: a success to KubeVirt
    if (verb === 'get' && answer.result === undefined) return 404;
    return verb === 'create' ? 201 : 200;
  }
  const err = answer.error;
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number') return status;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof AlreadyExistsError) return 409;
  if (err instanceof KubeInvalidError) return 422;
  return 0;
}
