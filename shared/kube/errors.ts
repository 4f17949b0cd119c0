/**
 * Kubernetes API failures as the project's error hierarchy (shared/errors.ts). client-node throws
 * three different shapes (docs/kube-client.md, "client-node as it behaves on the wire"): `ApiException` with `.code` and the raw Status body
 * as a *string*; plain `Error` with `.statusCode` from watches; `TypeError` with `.cause.code` for
 * network failures. {@link toKubeError} turns all of them into one of the classes below, so a
 * reconcile branches on classes, never on HTTP codes.
 *
 * | HTTP / failure                 | class                  | reason            | retried?                |
 * |--------------------------------|------------------------|-------------------|-------------------------|
 * | 404                            | NotFoundError          | NotFound          | caller decides          |
 * | 409 AlreadyExists              | AlreadyExistsError     | AlreadyExists     | caller decides          |
 * | 409 Conflict                   | KubeTransientError     | Conflict          | yes (re-read, retry)    |
 * | 422 on a patch: test op failed | KubeTransientError     | Conflict          | yes (re-read, retry)    |
 * | 429                            | KubeTransientError     | TooManyRequests   | yes, after Retry-After  |
 * | 5xx, network, timeout          | KubeTransientError     | ServerError       | yes                     |
 * | 422 Invalid                    | KubeInvalidError       | Invalid           | no (dead-letter)        |
 * | other 4xx (400, 403, 410, 415) | KubeRequestError       | the Status reason | yes, with backoff       |
 */
import { InvalidInputError, ReconcilerError, TransientError } from '../errors.ts';

/** Kubernetes verbs, as RBAC and audit logs spell them. */
export type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';

/** What was being done when a request failed; also the API call counter's key. */
export interface ApiRequest {
  readonly verb: Verb;
  /** Plural resource, e.g. `pods`, `virtualmachineinstances`. */
  readonly resource: string;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

/** One `details.causes` entry of a Kubernetes Status. */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** The fields of a Kubernetes `Status` body that error mapping reads. */
export interface StatusBody {
  readonly reason?: string;
  readonly message?: string;
  readonly code?: number;
  readonly details?: { readonly causes?: readonly StatusCause[]; readonly retryAfterSeconds?: number };
}

function describe(req: ApiRequest): string {
  const target = req.name ? `${req.namespace ? `${req.namespace}/` : ''}${req.name}` : req.namespace ?? '';
  return `${req.verb} ${req.resource}${target ? ` ${target}` : ''}`;
}

/** The object does not exist (404). */
export class NotFoundError extends ReconcilerError {
  readonly request: ApiRequest;
  constructor(request: ApiRequest, message?: string, options?: { cause?: unknown }) {
    super('NotFound', message ?? `${describe(request)}: not found`, options);
    this.request = request;
  }
}

/** A create hit an existing object of the same name (409 AlreadyExists). */
export class AlreadyExistsError extends ReconcilerError {
  readonly request: ApiRequest;
  constructor(request: ApiRequest, message?: string, options?: { cause?: unknown }) {
    super('AlreadyExists', message ?? `${describe(request)}: already exists`, options);
    this.request = request;
  }
}

/** Worth retrying: 409 Conflict, 429, 5xx, network failure; or a JSON patch whose `test` failed. */
export class KubeTransientError extends TransientError {
  readonly request: ApiRequest;
  /** HTTP status, undefined for network failures. */
  readonly status: number | undefined;
  /** From a 429's `Retry-After` (header or Status details). */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    reason: 'Conflict' | 'TooManyRequests' | 'ServerError',
    request: ApiRequest,
    message: string,
    extra: { status?: number | undefined; retryAfterSeconds?: number | undefined; cause?: unknown } = {},
  ) {
    super(reason, `${describe(request)}: ${message}`, { cause: extra.cause });
    this.request = request;
    this.status = extra.status;
    this.retryAfterSeconds = extra.retryAfterSeconds;
  }
}

/** The API server rejected the object as invalid (422): retrying the same write cannot help. */
export class KubeInvalidError extends InvalidInputError {
  readonly request: ApiRequest;
  readonly causes: readonly StatusCause[];
  constructor(request: ApiRequest, message: string, causes: readonly StatusCause[]) {
    super(causes[0]?.field ?? `${request.resource}/${request.name ?? ''}`, `${describe(request)}: ${message}`, 'Invalid');
    this.request = request;
    this.causes = causes;
  }
}

/** Any other refusal (400 BadRequest, 403 Forbidden, 410 Expired, 415…), reason from the Status. */
export class KubeRequestError extends ReconcilerError {
  readonly request: ApiRequest;
  readonly status: number;
  constructor(request: ApiRequest, status: number, reason: string, message: string, options?: { cause?: unknown }) {
    super(reason, `${describe(request)}: ${message}`, options);
    this.request = request;
    this.status = status;
  }
}

function parseStatus(body: unknown): StatusBody {
  if (body && typeof body === 'object') return body as StatusBody;
  if (typeof body !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed && typeof parsed === 'object' ? (parsed as StatusBody) : { message: body };
  } catch {
    return body ? { message: body.slice(0, 500) } : {};
  }
}

function httpStatus(err: Record<string, unknown>): number | undefined {
  for (const key of ['code', 'statusCode'] as const) {
    const v = err[key];
    if (typeof v === 'number' && v >= 100 && v < 600) return v;
  }
  return undefined;
}

/** The `Retry-After` header as whole seconds (how client-go reads it), or undefined. */
function retryAfterHeader(err: Record<string, unknown>): number | undefined {
  const headers = err.headers as Record<string, string> | undefined;
  const raw = headers?.['retry-after'] ?? headers?.['Retry-After'];
  return raw !== undefined && /^\d+$/.test(String(raw).trim()) ? Number(raw) : undefined;
}

function retryAfter(err: Record<string, unknown>, status: StatusBody): number | undefined {
  const header = retryAfterHeader(err);
  if (header !== undefined && header > 0) return header;
  return status.details?.retryAfterSeconds;
}

/**
 * The seconds an answer asks to be retried after, as client-go reads them (`checkWait`,
 * rest/with_retry.go): a 429 or a 5xx whose `Retry-After` header is a whole number of seconds.
 * Anything else — no answer, another status, no header — is undefined.
 */
export function retryAfterAnswer(err: unknown): { status: number; seconds: number } | undefined {
  if (!err || typeof err !== 'object' || err instanceof ReconcilerError) return undefined;
  const e = err as Record<string, unknown>;
  const status = httpStatus(e);
  if (status === undefined || (status !== 429 && status < 500)) return undefined;
  const seconds = retryAfterHeader(e);
  return seconds === undefined ? undefined : { status, seconds };
}

/** Network-level failure codes worth a retry (undici / Node). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  }
  return err instanceof TypeError && err.message === 'fetch failed' ? 'fetch failed' : undefined;
}

/** kube-apiserver's message for a 422 whose JSON patch could not be applied. */
const PATCH_NOT_APPLIED_MESSAGE = 'the server rejected our request due to an error in our request';

/**
 * Maps anything client-node throws to the classes above. Errors that are already ours pass
 * through; an unrecognised error is returned unchanged (a bug, reported as InternalError).
 */
/** kube-apiserver's refusal of a new finalizer on an object being deleted. */
const FINALIZER_ON_DELETING = /no new finalizers can be added if the object is being deleted/;

export function toKubeError(err: unknown, request: ApiRequest): unknown {
  if (err instanceof ReconcilerError) return err;
  if (!err || typeof err !== 'object') return err;
  const e = err as Record<string, unknown>;
  const code = httpStatus(e);
  if (code === undefined) {
    const net = networkCode(err);
    return net ? new KubeTransientError('ServerError', request, `network error: ${net}`, { cause: err }) : err;
  }
  const status = parseStatus(e.body);
  const message = status.message ?? `HTTP ${code}`;
  if (code === 404) return new NotFoundError(request, `${describe(request)}: ${message}`, { cause: err });
  if (code === 409 && status.reason === 'AlreadyExists') return new AlreadyExistsError(request, `${describe(request)}: ${message}`, { cause: err });
  if (code === 409) return new KubeTransientError('Conflict', request, message, { status: code, cause: err });
  if (code === 429) {
    return new KubeTransientError('TooManyRequests', request, message, { status: code, retryAfterSeconds: retryAfter(e, status), cause: err });
  }
  if (code >= 500) return new KubeTransientError('ServerError', request, message, { status: code, cause: err });
  const causes = status.details?.causes ?? [];
  // A JSON patch that cannot be applied — a `test` op failed or a path is missing — comes back as
  // 422: from kube-apiserver v1.37 with the generic message and empty details, from older servers
  // with an `UnexpectedServerResponse` cause wrapping the patch library's error. Either means "the
  // object changed since you read it", not "your object is invalid" (that 422 names the object and
  // its field causes): retry.
  const unapplied = causes.find((c) => c.reason === 'UnexpectedServerResponse');
  if (code === 422 && request.verb === 'patch' && (unapplied || (causes.length === 0 && message === PATCH_NOT_APPLIED_MESSAGE))) {
    return new KubeTransientError('Conflict', request, `patch not applied: ${unapplied?.message ?? 'a test operation failed or a path is missing'}`, { status: code, cause: err });
  }
  // A finalizer added to an object whose deletion began meanwhile: the object changed, not the
  // request's fault — KubeVirt's controllers return it and their workqueues retry (the soak, seed
  // 61: snapshots of VMs deleted under them were dead-lettered as bad input).
  if (code === 422 && FINALIZER_ON_DELETING.test(message)) return new KubeTransientError('Conflict', request, message, { status: code, cause: err });
  if (code === 422) return new KubeInvalidError(request, message, causes);
  return new KubeRequestError(request, code, status.reason ?? `Http${code}`, message, { cause: err });
}
