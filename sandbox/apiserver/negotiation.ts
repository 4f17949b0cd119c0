/**
 * Content negotiation: what the client's `Accept` header asks for. The emulator answers JSON
 * only; it serves the meta.k8s.io Table form (kubectl get) when asked, and answers 406 when a
 * client accepts nothing it can produce (kubectl's protobuf-only /openapi/v2 request), so that
 * the client falls back instead of choking on a JSON body it did not expect.
 */
import { ApiError } from './errors.ts';

/** One media range of an Accept header. */
interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: '*/*', params: {} }];
  return header.split(',').map((part) => {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  });
}

/** What the answer should be. */
export type Answer = { form: 'json' } | { form: 'table'; includeObject?: string };

function jsonLike(type: string): boolean {
  return type === 'application/json' || type === 'application/*' || type === '*/*';
}

/**
 * The first acceptable form: Table when a `as=Table;g=meta.k8s.io` range comes first among
 * those the server can produce (and `tables` says the endpoint can list as tables), else JSON.
 * Throws 406 when only unknown forms (protobuf, CBOR) are acceptable.
 */
export function negotiate(accept: string | undefined, tables = false): Answer {
  for (const r of parseAccept(accept)) {
    if (!jsonLike(r.type)) continue;
    if (r.params.as === undefined) return { form: 'json' };
    if (tables && r.params.as === 'Table' && r.params.g === 'meta.k8s.io' && (r.params.v === 'v1' || r.params.v === 'v1beta1')) return { form: 'table' };
  }
  throw notAcceptable();
}

/** 406 with the real server's message. */
export function notAcceptable(): ApiError {
  return new ApiError(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml');
}
