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
}

/** What a create admission hook sees. */
export interface CreateRequest {
  res: ResourceInfo;
  namespace: string | undefined;
  /** The object as it will be stored (a copy). */
  object: Record<string, unknown>;
  identity: string;
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

/** One request's target and caller. */
export interface Scope {
  res: ResourceInfo;
  namespace: string | undefined;
  identity: string;
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
  return subresource ? { identity: scope.identity, verb, subresource } : { identity: scope.identity, verb };
}

/** Identity recorded for writes the emulator's own controllers make. */
export const GC_IDENTITY = 'system:serviceaccount:kube-system:generic-garbage-collector';
export const NAMESPACE_CONTROLLER_IDENTITY = 'system:serviceaccount:kube-system:namespace-controller';
export const KUBELET_GRACE_IDENTITY = 'system:sandbox:grace-expiry';
