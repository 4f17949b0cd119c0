/**
 * Kubernetes `Status` error bodies, spelled like the real apiserver's (client-node hands the
 * raw body to callers, so the message text is observable and controllers branch on `reason`).
 */
import type { ResourceInfo } from './resources.ts';

/** One entry of `details.causes`. */
export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

/** The `metav1.Status` body of a failed request. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  /** Absent for errors upstream does not classify (its StatusReasonUnknown). */
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

/** An API error: thrown inside the emulator, turned into an HTTP answer at the edge. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusBody['details'];
  constructor(code: number, reason: string, message: string, details?: StatusBody['details']) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /** The JSON body to send. */
  toStatus(): StatusBody {
    const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, code: this.code };
    // Errors the real server raises without a StatusReason (plain storage errors) carry none.
    if (this.reason) body.reason = this.reason;
    if (this.details) body.details = this.details;
    return body;
  }
}

/** `pods` or `virtualmachineinstances.kubevirt.io`, as upstream prints a group resource. */
export function qualifiedResource(res: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return res.group ? `${res.resource}.${res.group}` : res.resource;
}

function who(res: Pick<ResourceInfo, 'group' | 'resource'>, name: string): NonNullable<StatusBody['details']> {
  return res.group ? { name, group: res.group, kind: res.resource } : { name, kind: res.resource };
}

export function notFound(res: Pick<ResourceInfo, 'group' | 'resource'>, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(res)} "${name}" not found`, who(res, name));
}

export function alreadyExists(res: Pick<ResourceInfo, 'group' | 'resource'>, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(res)} "${name}" already exists`, who(res, name));
}

export function conflict(res: Pick<ResourceInfo, 'group' | 'resource'>, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(res)} "${name}": ${why}`, who(res, name));
}

/**
 * 409 for failed DELETE preconditions, as the storage layer words it: the object is named by
 * `Kind.group` (not the resource), e.g. `VirtualMachineInstance.kubevirt.io "x": the UID in the precondition …`.
 */
export function preconditionConflict(res: Pick<ResourceInfo, 'group' | 'resource' | 'kind'>, name: string, why: string): ApiError {
  const kind = res.group ? `${res.kind}.${res.group}` : res.kind;
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${kind} "${name}": ${why}`, who(res, name));
}

/** 422 with field causes; message `Kind.group "name" is invalid: field: Reason: msg, ...`. */
export function invalid(res: Pick<ResourceInfo, 'group' | 'kind'>, name: string, causes: Array<{ reason: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate'; field: string; message: string }>): ApiError {
  const kind = res.group ? `${res.kind}.${res.group}` : res.kind;
  const word: Record<string, string> = { FieldValueRequired: 'Required value', FieldValueInvalid: 'Invalid value', FieldValueForbidden: 'Forbidden', FieldValueNotSupported: 'Unsupported value', FieldValueDuplicate: 'Duplicate value' };
  const text = causes.map((c) => `${c.field}: ${word[c.reason]}: ${c.message}`);
  const msg = `${kind} "${name}" is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`;
  const details: NonNullable<StatusBody['details']> = { name, kind: res.kind, causes };
  if (res.group) details.group = res.group;
  return new ApiError(422, 'Invalid', msg, details);
}

/**
 * 422 from a failed JSON-patch operation. kube-apiserver v1.37 answers with the generic message and
 * empty details (no cause naming the failed op, as older servers gave), which the real lane showed:
 * `why` is for our own logs only, never on the wire.
 */
export function patchRejected(_why: string): ApiError {
  return new ApiError(422, 'Invalid', PATCH_REJECTED_MESSAGE, {});
}

/** The message of a 422 for a JSON patch that could not be applied. */
export const PATCH_REJECTED_MESSAGE = 'the server rejected our request due to an error in our request';

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function forbidden(message: string, details?: StatusBody['details']): ApiError {
  return new ApiError(403, 'Forbidden', message, details);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

/** 410 Expired: `too old resource version: N (M)`. */
export function expired(requested: number | string, oldest: number | string): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

export function unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, { causes: [{ message: `unsupported content type ${contentType}` }] });
}

export function tooManyRequests(retryAfterSeconds = 1): ApiError {
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { causes: [{ reason: 'TooManyRequests', message: 'client rate limited' }], retryAfterSeconds });
}

export function internalError(message = 'injected fault'): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function timeout(message: string): ApiError {
  return new ApiError(504, 'Timeout', message, { retryAfterSeconds: 1 });
}

export function requestTooLarge(message: string): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
}
