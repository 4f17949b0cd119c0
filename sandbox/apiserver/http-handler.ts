/**
 * The HTTP edge: authentication (bearer token = identity), counting, fault injection, body
 * decoding, dispatch to list/get/watch/create/update/patch/delete, and Status error answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EvictionHooks } from './eviction.ts';
import { parseFieldValidation } from './field-validation.ts';
import { managerOf } from './managed-fields.ts';
import { readBody, readRaw, send, sendError, sendStored, storedJson, warningHeaders } from './http-io.ts';
import { applyObject } from './server-side-apply.ts';
import { serveSubresource } from './subresource-handler.ts';
import type { AuditLog } from './audit.ts';
import type { Aggregation } from './aggregation.ts';
import type { Core, Scope } from './core.ts';
import type { RequestCounters } from './counters.ts';
import { deleteObject, deleteResponse, parseDeleteOptions } from './deletion.ts';
import { discovery, SANDBOX_VERSION } from './discovery.ts';
import { ApiError, badRequest, conflict, internalError, invalid, methodNotAllowed, notFound, timeout } from './errors.ts';
import type { Faults } from './faults.ts';
import { listObjects } from './list.ts';
import { negotiate } from './negotiation.ts';
import { includeObjectParam, tableEvent, toTable } from './tables/table.ts';
import { apiVersionOf } from './resources.ts';
import { parseRoute, unknownPath, verbOf, type Route } from './routing.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { clone, isObject, type KubeObject } from './types.ts';
import type { WatchHub, WireEvent } from './watch.ts';
import { commitUpdate, createObject, patchObject, updateObject } from './writes.ts';

/** What the handler needs. */
export interface HandlerDeps {
  core: Core;
  hub: WatchHub;
  counters: RequestCounters;
  faults: Faults;
  audit: AuditLog;
  evictionHooks: EvictionHooks;
  /** Server-side watch timeout when the client sets none: [min, max] seconds. */
  watchTimeoutSeconds: [number, number];
  /** How long a read from a future resourceVersion waits before 504. */
  tooLargeWaitMs: number;
  serverAddress(): string;
  /** Identity (bearer token) → the user name admission sees (ApiServerOptions.users). */
  users?: Readonly<Record<string, string>>;
  /** Groups served by another server (aggregation.ts). */
  aggregation?: Aggregation;
}

function identityOf(req: IncomingMessage): string {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1]?.trim() || 'admin';
}

/**
 * The user a request acts as: its `Impersonate-User`, or its identity's user name. Impersonation is
 * not authorised here (the emulator has no RBAC; the real lane checks `impersonate`), and the
 * identity stays the authenticated one for counters and the audit, as kube-apiserver's audit
 * keeps `user` beside `impersonatedUser`.
 */
function userOfRequest(deps: HandlerDeps, req: IncomingMessage, identity: string): { user: string; impersonated?: true } {
  const impersonate = req.headers['impersonate-user'];
  const as = (Array.isArray(impersonate) ? impersonate[0] : impersonate)?.trim();
  if (as) return { user: as, impersonated: true };
  return { user: deps.users?.[identity] ?? identity };
}

function rvParam(q: URLSearchParams): number | undefined {
  const raw = q.get('resourceVersion');
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`invalid resource version: ${raw}`);
  return n;
}

/** Resolves once the store reaches `rv` or rejects with 504 after `ms` (upstream's ~3 s wait). */
function waitForRv(core: Core, rv: number, ms: number): Promise<void> {
  if (core.store.currentRv() >= rv) return Promise.resolve();
  const current = core.store.currentRv();
  return new Promise((resolve, reject) => {
    const unsubscribe = core.store.subscribe(() => {
      if (core.store.currentRv() >= rv) {
        clearTimeout(t);
        unsubscribe();
        resolve();
      }
    });
    const t = setTimeout(() => {
      unsubscribe();
      reject(timeout(`Too large resource version: ${rv}, current: ${current}`));
    }, ms);
  });
}

/** Creates the request listener. */
export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      const e = err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
      if (!res.headersSent) sendError(res, e);
      else res.end();
    });
  };
}

async function handle(deps: HandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { core } = deps;
  const url = new URL(req.url ?? '/', 'http://sandbox');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const q = url.searchParams;
  const method = req.method ?? 'GET';
  if (['/healthz', '/readyz', '/livez'].includes(path)) {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
    return;
  }
  if (path === '/version') return send(res, 200, SANDBOX_VERSION);
  if (method === 'GET' && (path === '/openapi/v2' || path.startsWith('/openapi/v3'))) return serveOpenApi(core, path, req, res);
  const aggregated = deps.aggregation?.target(path);
  if (aggregated !== undefined) return deps.aggregation!.proxy(aggregated, req, res);
  const doc = method === 'GET' ? discovery(core.registry, path, deps.serverAddress()) : undefined;
  if (doc) return send(res, 200, doc);

  const route = parseRoute(core.registry, path);
  if (!route) throw unknownPath();
  const watch = method === 'GET' && (q.get('watch') === 'true' || q.get('watch') === '1');
  const verb = verbOf(method, route, watch);
  const identity = identityOf(req);
  const resourceLabel = route.subresource ? `${route.res.resource}/${route.subresource}` : route.res.resource;
  deps.counters.record(identity, verb, route.res.group, resourceLabel, route.namespace ?? '');

  const target = { verb, resource: resourceLabel, identity, group: route.res.group, ...(route.name ? { name: route.name } : {}) };
  const delay = deps.faults.delayFor(target);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const injected = deps.faults.take(target);
  if (injected) {
    if (watch && injected.code === 410) {
      // A real "too old" watch: 200 + one ERROR event, then a clean end of stream.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ type: 'ERROR', object: injected.toStatus() }) + '\n');
      return;
    }
    throw injected;
  }

  const scope: Scope = { res: route.res, namespace: route.namespace, identity, ...userOfRequest(deps, req, identity), dryRun: q.getAll('dryRun').includes('All'), fieldManager: managerOf(q, req) };
  if (route.res.namespaced && route.name !== undefined && route.namespace === undefined) throw unknownPath();

  if (route.subresource && (await serveSubresource(core, deps.evictionHooks, route, verb, scope, req, res))) return;
  switch (verb) {
    case 'watch':
      return serveWatch(deps, route, q, req, res);
    case 'list': {
      const answer = negotiate(req.headers.accept, true);
      const rv = rvParam(q);
      const match = q.get('resourceVersionMatch');
      if (rv !== undefined && (match === 'NotOlderThan' || !match)) await waitForRv(core, rv, deps.tooLargeWaitMs);
      const limit = q.get('limit') ? Number(q.get('limit')) : undefined;
      const list = listObjects(core.store, route.res, route.namespace, { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector'), limit, continueToken: q.get('continue'), resourceVersion: rv, resourceVersionMatch: match });
      if (answer.form === 'table') return send(res, 200, toTable(route.res, list.items, core.clock.nowMs(), includeObjectParam(q), list.metadata));
      return send(res, 200, list);
    }
    case 'get': {
      const answer = negotiate(req.headers.accept, !route.subresource);
      const rv = rvParam(q);
      // GET ?resourceVersion=N means "not older than N": the current state always qualifies.
      if (rv !== undefined) await waitForRv(core, rv, deps.tooLargeWaitMs);
      const stored = core.store.peek(route.res, route.namespace, route.name!);
      if (!stored) throw notFound(route.res, route.name!);
      // The stored object itself (immutable, store.ts): only serialised from here on.
      const obj = route.res.builtin ? stored : { ...stored, apiVersion: apiVersionOf(route.res) };
      if (answer.form === 'table') return send(res, 200, toTable(route.res, [obj], core.clock.nowMs(), includeObjectParam(q), { resourceVersion: obj.metadata.resourceVersion }));
      return obj === stored ? sendStored(res, 200, obj) : send(res, 200, obj);
    }
    case 'create': {
      const body = await readBody(req);
      if (route.subresource === 'binding') return send(res, 201, bind(deps, scope, route.name!, body.value));
      if (route.name !== undefined) throw methodNotAllowed();
      const write = { ...scope, fieldValidation: parseFieldValidation(q, 'CreateOptions'), warnings: [] };
      return sendStored(res, 201, createObject(core, write, body.value, body.text), warningHeaders(write.warnings));
    }
    case 'update': {
      const body = await readBody(req);
      if (route.subresource === 'finalize') return send(res, 200, finalizeNamespace(deps, scope, route.name!, body.value));
      const write = { ...scope, fieldValidation: parseFieldValidation(q, 'UpdateOptions'), warnings: [] };
      const out = updateObject(core, write, route.name!, body.value, route.subresource, body.text);
      core.kickControllers();
      return sendStored(res, 200, out, warningHeaders(write.warnings));
    }
    case 'patch': {
      const contentType = req.headers['content-type'] ?? '';
      const write = { ...scope, fieldValidation: parseFieldValidation(q, 'PatchOptions'), warnings: [] };
      if (contentType.startsWith('application/apply-patch+yaml')) {
        const text = (await readRaw(req)).toString('utf8');
        const out = applyObject(core, write, route.name!, text, { fieldManager: q.get('fieldManager') ?? '', force: q.get('force') === 'true', ...(route.subresource ? { subresource: route.subresource } : {}) });
        core.kickControllers();
        return send(res, out.created ? 201 : 200, out.object, warningHeaders(write.warnings));
      }
      if (q.has('force')) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [{ reason: 'FieldValueForbidden', field: 'force', message: 'may not be specified for non-apply patch' }]);
      const body = await readBody(req);
      const out = patchObject(core, write, route.name!, contentType, body.value, route.subresource, body.text);
      core.kickControllers();
      return sendStored(res, 200, out, warningHeaders(write.warnings));
    }
    case 'delete': {
      const body = (await readBody(req)).value;
      const result = deleteObject(core, scope, route.name!, parseDeleteOptions(q, body));
      return send(res, 200, deleteResponse(route.res, result));
    }
    case 'deletecollection': {
      const body = (await readBody(req)).value;
      const opts = parseDeleteOptions(q, body);
      const label = parseLabelSelector(q.get('labelSelector'));
      const field = parseFieldSelector(q.get('fieldSelector'), route.res);
      const items: KubeObject[] = [];
      for (const o of core.store.scan(route.res, route.namespace)) {
        if (!label.matches(o.metadata.labels) || !field.matches(o)) continue;
        items.push(deleteObject(core, { ...scope, namespace: o.metadata.namespace }, o.metadata.name!, opts, 'deletecollection').object);
      }
      return send(res, 200, { apiVersion: apiVersionOf(route.res), kind: `${route.res.kind}List`, metadata: { resourceVersion: String(core.store.currentRv()) }, items });
    }
    default:
      throw methodNotAllowed();
  }
}

/** `/openapi/v2`, `/openapi/v3` and `/openapi/v3/{api/v1 | apis/g/v}`. */
function serveOpenApi(core: Core, path: string, req: IncomingMessage, res: ServerResponse): void {
  negotiate(req.headers.accept);
  if (path === '/openapi/v2') return send(res, 200, core.openapi.v2Document());
  if (path === '/openapi/v3') return send(res, 200, core.openapi.v3Index());
  const doc = core.openapi.v3Document(path.slice('/openapi/v3/'.length));
  if (!doc) throw unknownPath();
  // Documents are addressed by content hash: clients may cache them for good.
  send(res, 200, doc, { 'Cache-Control': 'public, immutable', Expires: new Date(Date.now() + 365 * 86_400_000).toUTCString() });
}

/**
 * A watch event's JSON line, encoded once per event object: the hub gives every watcher of a
 * store event the same frozen object (watch.ts), so N watchers of the same encoding share one
 * JSON.stringify. Table watches encode per watcher (their rows carry the watcher's options).
 */
const encodedEvents = new WeakMap<WireEvent, Buffer>();
function encodedEvent(e: WireEvent): Buffer {
  let line = encodedEvents.get(e);
  if (line === undefined) {
    if (Object.isFrozen(e)) {
      // A shared event carries the stored object itself when it already leads with its type meta
      // (watch.ts): its JSON is the write's answer's too.
      const object = e.object !== null && typeof e.object === 'object' ? storedJson(e.object) : JSON.stringify(e.object);
      line = Buffer.from(`{"type":${JSON.stringify(e.type)},"object":${object}}\n`);
      encodedEvents.set(e, line);
    } else line = Buffer.from(JSON.stringify(e) + '\n');
  }
  return line;
}

/**
 * A watch's server-side timeout when the client names none: random in [lo, hi] as kube-apiserver
 * picks it (`--min-request-timeout` to twice that), in whole seconds. Each watch arms a Node timer
 * of that length, and Node keeps a timer list per distinct length until that length has passed,
 * even when the timer is cleared: a watch closed early (a drop, a relay restart) left a list for up
 * to an hour, 30,000 of them (2 MB) in an hour's soak. Whole seconds bound them to one per second
 * of the range.
 */
export function watchTimeoutSeconds([lo, hi]: readonly [number, number], random: () => number = Math.random): number {
  return Math.round(lo + random() * (hi - lo));
}

function serveWatch(deps: HandlerDeps, route: Route, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const filter = { res: route.res, namespace: route.namespace, label: parseLabelSelector(q.get('labelSelector')), field: parseFieldSelector(q.get('fieldSelector'), route.res) };
  const raw = q.get('resourceVersion');
  const fromRv = raw === null || raw === '' || raw === '0' ? undefined : rvParam(q);
  const ts = q.get('timeoutSeconds');
  const table = negotiate(req.headers.accept, true).form === 'table';
  const include = includeObjectParam(q);
  const timeoutSec = ts ? Number(ts) : watchTimeoutSeconds(deps.watchTimeoutSeconds);
  // Headers go out at once: client-node cannot abort a watch before it has them.
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const clock = deps.core.clock;
  const send = (e: WireEvent) => res.write(table ? JSON.stringify(tableEvent(route.res, e, clock.nowMs(), include)) + '\n' : encodedEvent(e));
  const stop = deps.hub.open(filter, { send, end: () => res.end() }, {
    fromRv,
    bookmarks: q.get('allowWatchBookmarks') === 'true',
    sendInitialEvents: q.get('sendInitialEvents') === 'true',
    timeoutMs: timeoutSec * 1000,
  });
  req.on('close', stop);
  res.on('close', stop);
}

/** POST pods/{name}/binding: what the scheduler does. */
function bind(deps: HandlerDeps, scope: Scope, name: string, body: unknown): object {
  const { core } = deps;
  const stored = core.store.peek(scope.res, scope.namespace, name);
  if (!stored) throw notFound(scope.res, name);
  const target = isObject(body) && isObject(body.target) ? body.target : undefined;
  if (!target || typeof target.name !== 'string') throw badRequest('Binding target name is required');
  const spec = isObject(stored.spec) ? stored.spec : {};
  if (spec.nodeName) throw conflict(scope.res, name, `pod ${name} is already assigned to node "${String(spec.nodeName)}"`);
  if (stored.metadata.deletionTimestamp) throw conflict(scope.res, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  // The next version shares what it does not change with the stored one (immutable, store.ts).
  const next: KubeObject = { ...stored, metadata: { ...stored.metadata }, spec: { ...spec, nodeName: target.name } };
  const status = isObject(stored.status) ? stored.status : {};
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isObject(c) && c.type === 'PodScheduled'));
  conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: core.clock.isoNow() });
  next.status = { ...status, conditions };
  if (!scope.dryRun) core.store.put(scope.res, next, { identity: scope.identity, verb: 'create', subresource: 'binding' });
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}

/** PUT namespaces/{name}/finalize: sets spec.finalizers (the namespace controller's last step). */
function finalizeNamespace(deps: HandlerDeps, scope: Scope, name: string, body: unknown): KubeObject {
  const { core } = deps;
  const stored = core.store.peek(scope.res, undefined, name);
  if (!stored) throw notFound(scope.res, name);
  const next = clone(stored);
  const spec = isObject(body) && isObject(body.spec) ? body.spec : {};
  next.spec = { ...(isObject(stored.spec) ? stored.spec : {}), finalizers: Array.isArray(spec.finalizers) ? spec.finalizers : [] };
  const written = commitUpdate(core, scope, stored, next, 'update', 'finalize');
  core.kickControllers();
  return written;
}
