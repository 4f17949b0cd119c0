/**
 * The sandbox cluster's Kubernetes API server emulator: `startApiServer()` serves the core,
 * KubeVirt, CDI, coordination, RBAC and apps resources the project needs over plain HTTP on
 * 127.0.0.1, with the real apiserver's semantics for resourceVersions, watches, selectors,
 * patches, status subresources, finalizers, graceful pod deletion, garbage collection and
 * namespaces (see docs/sandbox-apiserver.md for what is and is not emulated).
 */
import { Aggregation } from './aggregation.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { createClock, type Clock } from '../clock.ts';
import { AuditLog } from './audit.ts';
import type { Core, CreateHook, MutatingCreateHook, MutatingUpdateHook, UpdateHook } from './core.ts';
import { RequestCounters } from './counters.ts';
import { DEFAULT_EVENT_TTL_MS, startEventTtl } from './event-ttl.ts';
import { startDisruptionController } from './disruption.ts';
import { EvictionHooks, type EvictionHook } from './eviction.ts';
import { Faults } from './faults.ts';
import { GarbageCollector } from './garbage-collector.ts';
import { createHandler } from './http-handler.ts';
import { OpenApiDocuments } from './openapi/documents.ts';
import { sandboxKubeConfig, writeSandboxKubeconfig } from './kubeconfig.ts';
import { ResourceRegistry } from './resources.ts';
import { Store } from './store.ts';
import { WatchHub } from './watch.ts';
import { createObject } from './writes.ts';
import { storeCrdObjects } from './crd-objects.ts';
import { SYSTEM_PRIORITY_CLASSES } from './admission.ts';
import { loadCrds } from './crds.ts';

export type { AuditEntry, AuditQuery, AuditLog } from './audit.ts';
export type { CountQuery, RequestCount, RequestCounters } from './counters.ts';
export type { FaultCode, FaultMatch, Faults } from './faults.ts';
export type { KubeObject } from './types.ts';
export type { EvictionHook, EvictionRequest } from './eviction.ts';
export type { CreateHook, CreateRequest, MutatingCreateHook, MutatingUpdateHook, UpdateHook, UpdateRequest } from './core.ts';
export { ApiError } from './errors.ts';

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  /** Default 0 (any free port). */
  port?: number;
  host?: '127.0.0.1';
  /** Shared with the simulated node side; default a real-time clock. */
  clock?: Clock;
  /** Watch history length in events (older RVs answer 410 Expired). Default 1000. */
  watchHistory?: number;
  /** Remove gracefully deleted pods when their grace expires (default true); false = wait for a kubelet. */
  podGraceExpiry?: boolean;
  /** Bookmark period for watches that allow bookmarks (real ms, default 60 000). */
  bookmarkIntervalMs?: number;
  /** Server-side watch timeout when the client gives none, [min, max] seconds (default 1800–3600). */
  watchTimeoutSeconds?: [number, number];
  /** Wait before answering 504 for a future resourceVersion (real ms, default 3000). */
  tooLargeWaitMs?: number;
  /** Answer watches from a future resourceVersion with 410 instead of waiting + 504. */
  tooLargeAsGone?: boolean;
  /** Namespaces that exist at start (default `default`, `kube-system`, `kubevirt`). */
  namespaces?: string[];
  /** Deep-freeze stored objects, so that a mutation of one throws (default true; store.ts). */
  freezeObjects?: boolean;
  /**
   * The user name each identity (bearer token) has for admission — what a webhook reads as
   * `userInfo.username` — when not the identity itself (the sandbox gives the real lane's users).
   */
  users?: Readonly<Record<string, string>>;
  /** How long an Event lives after its last write (kube-apiserver's `--event-ttl`; default one hour, event-ttl.ts). */
  eventTtlMs?: number;
}

/** A running emulator. */
export interface ApiServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** A client-node KubeConfig whose bearer token is `identity` (default "admin"), skipTLSVerify. */
  kubeConfig(identity?: string): KubeConfig;
  /** Writes that kubeconfig to `path`; returns the path. */
  writeKubeconfig(path: string, identity?: string): Promise<string>;
  faults: Faults;
  counters: RequestCounters;
  /** The committed writes (on the real control plane: read from kube-apiserver's audit log). */
  audit: Pick<AuditLog, 'query' | 'subscribe' | 'clear' | 'limit'>;
  clock: Clock;
  /** Test hooks beyond the HTTP API. */
  control: ApiServerControl;
  /** Admission extension points. */
  admission: ApiServerAdmission;
  close(): Promise<void>;
}

/** Admission extension points (in-process, like compiled-in admission plugins). */
export interface ApiServerAdmission {
  /**
   * Adds a hook run on every `pods/eviction` before budgets are checked; it refuses the
   * eviction by throwing an ApiError (e.g. 429). Returns the function that removes it.
   */
  onEviction(hook: EvictionHook): () => void;
  /**
   * Adds a hook run on every create after defaulting (a validating webhook, compiled in); it
   * refuses the create by throwing an ApiError. Returns the function that removes it.
   */
  onCreate(hook: CreateHook): () => void;
  /**
   * Adds a hook run on every create before the storage create (a mutating webhook): it returns
   * the object to store instead, or refuses by throwing an ApiError. Returns the remover.
   */
  onMutateCreate(hook: MutatingCreateHook): () => void;
  /**
   * Adds a hook run on every update and patch of a request (a mutating webhook): it returns the
   * object to store instead, or refuses by throwing an ApiError. Returns the remover.
   */
  onMutateUpdate(hook: MutatingUpdateHook): () => void;
  /** Adds a hook run on every update and patch of a request, after the mutating ones (a validating webhook). */
  onUpdate(hook: UpdateHook): () => void;
  /**
   * Serves `/apis/<group>/…` from another server, as an APIService does (aggregation.ts): the
   * sandbox's virt-api for `subresources.kubevirt.io`. Returns the remover.
   */
  aggregate(group: string, baseUrl: string): () => void;
}

/** Test hooks. */
export interface ApiServerControl {
  /** Current global resourceVersion. */
  resourceVersion(): number;
  /** Drops watch history so that RVs up to now answer 410 Expired (keeps the newest `keep`). */
  compactHistory(keep?: number): void;
  /** Resolves once the garbage collector and namespace controller are idle. */
  settle(): Promise<void>;
  /** Number of open watches. */
  openWatches(): number;
}

/** Appends `hook` to `hooks`; returns the function that removes it. */
function addHook<T>(hooks: T[], hook: T): () => void {
  hooks.push(hook);
  return () => {
    const at = hooks.indexOf(hook);
    if (at >= 0) hooks.splice(at, 1);
  };
}

/** Starts the emulator. */
export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const clock = opts.clock ?? createClock();
  const registry = new ResourceRegistry();
  const store = new Store(opts.watchHistory ?? 1000, { freeze: opts.freezeObjects ?? true });
  let gc: GarbageCollector | undefined;
  const core: Core = { store, registry, openapi: new OpenApiDocuments(registry), clock, podGraceExpiry: opts.podGraceExpiry ?? true, kickControllers: () => gc?.kick() };
  gc = new GarbageCollector(core);
  // Every change may start a cascade (owner gone, finalizer dropped, namespace emptied).
  store.subscribe((e) => {
    gc.note(e);
    gc.kick();
  });
  const tooLargeWaitMs = opts.tooLargeWaitMs ?? 3000;
  const hub = new WatchHub(store, { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000, tooLargeWaitMs, tooLargeAsGone: opts.tooLargeAsGone ?? false });
  const counters = new RequestCounters();
  const audit = new AuditLog(store, clock);
  const evictionHooks = new EvictionHooks();
  const aggregation = new Aggregation();
  const stopDisruption = startDisruptionController(core);
  const stopEventTtl = startEventTtl(store, clock, opts.eventTtlMs ?? DEFAULT_EVENT_TTL_MS);
  const faults = new Faults(() => hub.dropAll(), () => store.currentRv());

  const nsRes = registry.byPath('', 'v1', 'namespaces')!;
  for (const name of opts.namespaces ?? ['default', 'kube-system', 'kubevirt']) {
    createObject(core, { res: nsRes, namespace: undefined, identity: 'system:apiserver', dryRun: false }, { metadata: { name } });
  }
  const pcRes = registry.byPath('scheduling.k8s.io', 'v1', 'priorityclasses')!;
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    createObject(core, { res: pcRes, namespace: undefined, identity: 'system:apiserver', dryRun: false }, { metadata: { name: pc.name }, value: pc.value, description: pc.description });
  }
  storeCrdObjects(core, loadCrds());

  let url = '';
  const server = createServer(
    createHandler({ core, hub, counters, faults, audit, evictionHooks, aggregation, watchTimeoutSeconds: opts.watchTimeoutSeconds ?? [1800, 3600], tooLargeWaitMs, serverAddress: () => url.replace(/^http:\/\//, ''), ...(opts.users ? { users: opts.users } : {}) }),
  );
  // client-node's makeApiClient builds a new undici dispatcher for every request, so its
  // connections are never reused (ours keep theirs: shared/kube/connections.ts, whose agents let an
  // idle socket go 0.5 s before this hint, not undici's 2 s, which is all of it); each would stay open until undici's 4 s idle timeout, i.e. thousands of sockets (and
  // EMFILE) under a burst (at Node's old 65 s default). Closing idle connections soon keeps that
  // bounded. Not sooner than 2 s: the answer's `Keep-Alive: timeout=<whole seconds>` is what
  // pooling clients (Node's agents, shared/kube/http-client.ts in the Lambda bundles) keep a socket
  // for, minus a second, so below 2 s they reuse none and every call of theirs opened a
  // connection (at 500 ms: 660 connects for 660 calls of one function instance), which a real
  // kube-apiserver never makes them do.
  server.keepAliveTimeout = 2000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  url = `http://127.0.0.1:${addr.port}`;

  return {
    url,
    kubeConfig: (identity = 'admin') => sandboxKubeConfig(url, identity),
    writeKubeconfig: (path, identity = 'admin') => writeSandboxKubeconfig(path, url, identity),
    faults,
    counters,
    audit,
    clock,
    control: {
      resourceVersion: () => store.currentRv(),
      compactHistory: (keep = 0) => store.compact(keep),
      settle: () => gc.settle(),
      openWatches: () => hub.size,
    },
    admission: {
      onEviction: (hook) => evictionHooks.add(hook),
      onMutateCreate: (hook) => addHook((core.mutatingCreateHooks ??= []), hook),
      onCreate: (hook) => addHook((core.createHooks ??= []), hook),
      onMutateUpdate: (hook) => addHook((core.mutatingUpdateHooks ??= []), hook),
      onUpdate: (hook) => addHook((core.updateHooks ??= []), hook),
      aggregate: (group, baseUrl) => aggregation.add(group, baseUrl),
    },
    async close() {
      stopDisruption();
      stopEventTtl();
      hub.dropAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (!opts.clock) clock.dispose();
    },
  };
}
