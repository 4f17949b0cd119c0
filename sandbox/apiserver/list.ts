/**
 * LIST: selectors, `resourceVersion` + `resourceVersionMatch` (NotOlderThan served from the
 * current state, which is never older; Exact reconstructed from history), and pagination with
 * opaque continue tokens that pin the snapshot RV (410 once history no longer reaches it).
 */
import { ApiError, badRequest, expired } from './errors.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { apiVersionOf, type ResourceInfo } from './resources.ts';
import type { Store } from './store.ts';
import type { KubeObject } from './types.ts';

/** The list query parameters. */
export interface ListParams {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number | undefined;
  continueToken?: string | null;
  resourceVersion?: number | undefined;
  resourceVersionMatch?: string | null;
}

interface Token {
  rv: number;
  after: string;
}

function encodeToken(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(raw: string): Token {
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64url').toString()) as Token;
    if (typeof t.rv === 'number' && typeof t.after === 'string') return t;
  } catch {
    // fall through to the 400 below
  }
  throw badRequest(`continue key is not valid: ${raw}`);
}

function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!;
}

/** The snapshot RV a read must be served at; waits are the caller's business (see `tooLarge`). */
export function readRv(store: Store, rv: number | undefined, match: string | null | undefined): { rv: number; exact: boolean } {
  if (match && rv === undefined) {
    throw new ApiError(422, 'Invalid', 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  if (match && match !== 'NotOlderThan' && match !== 'Exact') {
    throw new ApiError(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  }
  if (match === 'Exact') return { rv: rv!, exact: true };
  return { rv: store.currentRv(), exact: false };
}

/** A `<Kind>List` answer. */
export interface ObjectList {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  items: KubeObject[];
}

/** Builds the `<Kind>List` answer. */
export function listObjects(store: Store, res: ResourceInfo, namespace: string | undefined, p: ListParams): ObjectList {
  const label = parseLabelSelector(p.labelSelector);
  const field = parseFieldSelector(p.fieldSelector, res);
  let snapshotRv: number;
  let after = '';
  let items: KubeObject[];
  if (p.continueToken) {
    const t = decodeToken(p.continueToken);
    if (t.rv < store.oldestRv()) {
      throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    }
    snapshotRv = t.rv;
    after = t.after;
    items = store.scanAt(res, namespace, t.rv);
  } else {
    const at = readRv(store, p.resourceVersion, p.resourceVersionMatch);
    snapshotRv = at.rv;
    if (at.exact && at.rv < store.oldestRv()) throw expired(at.rv, store.oldestRv());
    const selected = (o: KubeObject) => label.matches(o.metadata.labels) && field.matches(o);
    items = at.exact ? store.scanAt(res, namespace, at.rv) : store.scan(res, namespace, selected, label.equalities);
  }
  const matching = items.filter((o) => (!after || keyOf(o) > after) && label.matches(o.metadata.labels) && field.matches(o));
  const limit = p.limit && p.limit > 0 ? p.limit : undefined;
  const page = limit ? matching.slice(0, limit) : matching;
  const metadata: Record<string, unknown> = { resourceVersion: String(snapshotRv) };
  if (limit && matching.length > limit) {
    metadata.continue = encodeToken({ rv: snapshotRv, after: keyOf(page[page.length - 1]!) });
    if (!p.labelSelector && !p.fieldSelector) metadata.remainingItemCount = matching.length - limit;
  }
  return {
    apiVersion: apiVersionOf(res),
    kind: res.listKind,
    metadata,
    items: page.map((o) => {
      // A shallow copy: only the top-level type fields differ from the stored object, which no
      // one mutates (store.ts); a deep copy of every item made large lists cost twice.
      const c: KubeObject = { ...o };
      // The real server omits apiVersion/kind on built-in list items (catches code reading obj.kind).
      if (res.builtin) {
        delete c.apiVersion;
        delete c.kind;
      } else c.apiVersion = apiVersionOf(res); // versions share storage: answer at the version asked
      return c;
    }),
  };
}
