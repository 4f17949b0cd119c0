/**
 * The shared state every request handler and background controller of the emulator works on,
 * and the scope of one request.
 */
import type { Clock } from '../clock.ts';
import type { FieldValidation } from './field-validation.ts';
import type { OpenApiDocuments } from './openapi/documents.ts';
import type { ResourceInfo, ResourceRegistry } from './resources.ts';
import type { Store, WriteContext } from './store.ts';

/** Emulator-wide state. */
export interface Core {
  store: Store;
  registry: ResourceRegistry;
  /** OpenAPI documents and the schema catalogue (validation, pruning, apply). */
  openapi: OpenApiDocuments;
  clock: Clock;
  /** Remove gracefully deleted pods when their grace period expires (no kubelet needed). */
  podGraceExpiry: boolean;
  /** Wakes the garbage collector / namespace controller after a change. */
  kickControllers(): void;
  /** Validating admission on every create (index.ts `admission.onCreate`), in order. */
  createHooks?: CreateHook[];
  /** Mutating admission on every create (index.ts `admission.onMutateCreate`), in order. */
  mutatingCreateHooks?: MutatingCreateHook[];
  /** Mutating admission on every update and patch (index.ts `admission.onMutateUpdate`), in order. */
  mutatingUpdateHooks?: MutatingUpdateHook[];
  /** Validating admission on every update and patch (index.ts `admission.onUpdate`), in order. */
  updateHooks?: UpdateHook[];
}

/** What a create admission hook sees. */
export interface CreateRequest {
  res: ResourceInfo;
  namespace: string | undefined;
  /** The object as it will be stored: a copy for a mutating hook; the object itself for a validating hook, which only reads. */
  object: Record<string, unknown>;
  identity: string;
  /** The user name webhooks see (`userInfo.username`): Scope.user. */
  user: string;
  dryRun: boolean;
}

/** Refuses a create by throwing an ApiError; returning lets it proceed (a validating webhook). */
export type CreateHook = (core: Core, request: CreateRequest) => void;

/**
 * A mutating webhook on create: sees the object as decoded (no name generated, no uid yet, as
 * kube-apiserver calls mutating admission before the storage create) and returns the object to
 * store instead, or undefined to leave it; refuses by throwing an ApiError.
 */
export type MutatingCreateHook = (core: Core, request: CreateRequest) => Record<string, unknown> | undefined;

/** What an update admission hook sees (PUT and PATCH, of the object or a subresource). */
export interface UpdateRequest {
  res: ResourceInfo;
  namespace: string | undefined;
  /** `status` for a write to /status; undefined for the object itself. */
  subresource: string | undefined;
  /** The object as stored now (read-only). */
  oldObject: Record<string, unknown>;
  /** The object as it would be stored: a copy for a mutating hook; the object itself for a validating hook, which only reads. */
  object: Record<string, unknown>;
  identity: string;
  user: string;
  dryRun: boolean;
}

/** A mutating webhook on update: returns the object to store instead, or undefined; refuses by throwing an ApiError. */
export type MutatingUpdateHook = (core: Core, request: UpdateRequest) => Record<string, unknown> | undefined;

/** A validating webhook on update: refuses by throwing an ApiError. */
export type UpdateHook = (core: Core, request: UpdateRequest) => void;

/** One request's target and caller. */
export interface Scope {
  res: ResourceInfo;
  namespace: string | undefined;
  /** Who authenticated (the bearer token): counters, audit, fault matching. */
  identity: string;
  /**
   * The user name admission sees: the `Impersonate-User` of the request, else the identity's user
   * name (ApiServerOptions.users), else the identity itself. Unset for the emulator's own writes.
   */
  user?: string;
  /** Set when the request impersonated `user`. */
  impersonated?: boolean;
  dryRun: boolean;
  /** The request's `fieldValidation` (HTTP writes only; the emulator's own writes are trusted). */
  fieldValidation?: FieldValidation;
  /** Warnings the answer carries as `Warning: 299` headers. */
  warnings?: string[];
  /** The field manager of an HTTP write (managedFields); internal writes leave ownership alone. */
  fieldManager?: string;
  /** Server-side apply computed the object's managedFields itself: keep them as they are. */
  applying?: boolean;
}

/** The audit context of a write made on behalf of a request. */
export function writeContext(scope: Scope, verb: string, subresource?: string): WriteContext {
  const ctx: WriteContext = subresource ? { identity: scope.identity, verb, subresource } : { identity: scope.identity, verb };
  if (scope.impersonated && scope.user) ctx.impersonatedUser = scope.user;
  return ctx;
}

/** The user name admission judges a request by (see Scope.user). */
export function userOf(scope: Pick<Scope, 'user' | 'identity'>): string {
  return scope.user ?? scope.identity;
}

/** Identity recorded for writes the emulator's own controllers make. */
export const GC_IDENTITY = 'system:serviceaccount:kube-system:generic-garbage-collector';
export const NAMESPACE_CONTROLLER_IDENTITY = 'system:serviceaccount:kube-system:namespace-controller';
export const KUBELET_GRACE_IDENTITY = 'system:sandbox:grace-expiry';
