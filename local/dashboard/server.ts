/**
 * The local runtime's web dashboard: one page (page.html) plus the JSON it polls, Prometheus text
 * at /metrics and /healthz, on 127.0.0.1 only. `up` starts it; tests build it from a runtime and
 * a VMI phase counter, without the CLI.
 *
 *   GET  /              the page
 *   GET  /api/summary   queue depth now and over time, reconcile rate/latency, VMI phases, errors
 *   GET  /api/dlq       dead-lettered keys
 *   POST /api/replay    {"controller"?, "key"} or {"controller"?, "all": true} → ReplayReport
 *   GET  /api/trace?target=vm/ns/name   the trace of `virt-reconciler trace` (ns/name alone = vm/ns/name)
 *   GET  /api/alerts    what the Prometheus given as `prometheus` reports firing and pending (alerts.ts)
 *   GET  /metrics       the metrics registry, Prometheus text format (KubeVirt's metrics included)
 *   GET  /healthz       "ok"
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { controllerInfo, isController } from '../../shared/controllers.ts';
import { CONTROLLERS, isKey, type Controller } from '../../shared/queue/message.ts';
import type { ReplayFilter } from '../../shared/queue/port.ts';
import { BadTargetError, isClusterScopedTarget, parseTarget, type Target } from '../../ops/target.ts';
import { collectTrace, type TraceSources } from '../../ops/trace/collect.ts';
import { RecentErrors } from './recent-errors.ts';
import { alertsPanel } from './alerts.ts';
import { depths, sample, summarize, type DashboardSource, type DepthSample } from './summary.ts';

export interface DashboardOptions {
  /** The runtime whose queue and metrics are shown (a LocalRuntime). */
  readonly source: DashboardSource;
  /** VMIs by status.phase, read from the cluster. */
  readonly vmiPhases: () => Promise<Record<string, number>>;
  /** Warn/error lines the runtime logged (up.ts tees its logger into it). */
  readonly recentErrors?: RecentErrors;
  /** Default 8181; 0 = any free port. */
  readonly port?: number;
  /** How often queue depth is sampled for the chart, ms (default 500). */
  readonly sampleMs?: number;
  /** Chart points kept (default 600: five minutes at 500 ms). */
  readonly historySize?: number;
  readonly now?: () => number;
  /** Where `/api/trace` reads (the runtime's traces, the cluster's migrations); without it, 404. */
  readonly trace?: Omit<TraceSources, 'now'>;
  /** A Prometheus evaluating KubeVirt's rules over this runtime's /metrics (`up --prometheus URL`): the alerts panel reads it. */
  readonly prometheus?: string;
  /** Shadow mode's divergences (`up --shadow`, docs/cutover.md); without it the panel says shadow mode is off. */
  readonly divergences?: () => readonly unknown[];
}

export interface Dashboard {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export const DEFAULT_DASHBOARD_PORT = 8181;
/** The page: plain HTML with a small inline script, read once (no build step). */
const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');
/** Replay requests are tiny; anything bigger is not one. */
const MAX_BODY_BYTES = 4096;

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Starts the dashboard on 127.0.0.1; resolves once it listens (rejects on EADDRINUSE and the like). */
export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  const now = opts.now ?? Date.now;
  const errors = opts.recentErrors ?? new RecentErrors();
  const historySize = opts.historySize ?? 600;
  const history: DepthSample[] = [];

  // Sampling on the server, not on page polls: the chart has history even with no page open,
  // and a short burst between two polls still shows.
  let sampling = false;
  const takeSample = async (): Promise<void> => {
    if (sampling) return; // a slow database must not pile up samplers
    sampling = true;
    try {
      history.push(sample(opts.source, await depths(opts.source), now()));
      if (history.length > historySize) history.splice(0, history.length - historySize);
    } catch {
      // The queue is closing or busy: skip this point, the next one will tell.
    } finally {
      sampling = false;
    }
  };
  await takeSample();
  const sampler = setInterval(() => void takeSample(), opts.sampleMs ?? 500);
  sampler.unref();

  const routes: Record<string, (req: IncomingMessage) => Promise<{ type: string; body: string }>> = {
    'GET /': async () => ({ type: 'text/html; charset=utf-8', body: PAGE }),
    'GET /healthz': async () => ({ type: 'text/plain', body: 'ok\n' }),
    'GET /metrics': async () => ({ type: 'text/plain; version=0.0.4', body: opts.source.metrics.render() }),
    'GET /api/summary': async () => {
      const [queues, phases] = await Promise.all([
        depths(opts.source),
        opts.vmiPhases().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
      ]);
      return json(summarize({ source: opts.source, queues, history, phases, errors: errors.list(), errorsTotal: errors.total, now: now() }));
    },
    'GET /api/dlq': async () => json(await opts.source.queue.listDeadLetters()),
    'GET /api/alerts': async () => json(await alertsPanel(opts.prometheus)),
    'GET /api/divergences': async () => json(opts.divergences ? { shadow: true, divergences: opts.divergences() } : { shadow: false, divergences: [] }),
    'GET /api/trace': async (req) => {
      if (!opts.trace) throw new HttpError(404, 'traces are not available here');
      return json(await collectTrace(traceTarget(req), { ...opts.trace, now: now() }));
    },
    'POST /api/replay': async (req) => {
      const report = await opts.source.queue.replay(replayFilter(await readJson(req)));
      await takeSample(); // the page redraws from the next summary: let it see the move at once
      return json(report);
    },
  };

  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      checkHost(req);
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const route = routes[`${req.method} ${path}`];
      if (!route) throw new HttpError(Object.keys(routes).some((r) => r.endsWith(` ${path}`)) ? 405 : 404, `no ${req.method} ${path}`);
      const out = await route(req);
      res.writeHead(200, { 'content-type': out.type, 'cache-control': 'no-store' }).end(out.body);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_DASHBOARD_PORT, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sampler);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(value: unknown): { type: string; body: string } {
  return { type: 'application/json', body: JSON.stringify(value) };
}

/**
 * DNS rebinding: a page on some other site could resolve its own name to 127.0.0.1 and drive the
 * replay endpoint. Only loopback host names are served.
 */
function checkHost(req: IncomingMessage): void {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(host)) throw new HttpError(403, `host '${host}' not served`);
}

/**
 * Reads a small JSON body. Requiring `application/json` also keeps other sites' pages out: a
 * cross-origin form or no-cors fetch cannot send that content type without a preflight, which
 * this server never grants.
 */
async function readJson(req: IncomingMessage): Promise<unknown> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'send application/json');
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'body is not JSON');
  }
}

/** `?target=vm/ns/name` (or `ns/name`, read as the VM's chain, which includes its VMI); bad input is a 400. */
function traceTarget(req: IncomingMessage): Target {
  const text = (new URL(req.url ?? '/', 'http://localhost').searchParams.get('target') ?? '').trim();
  try {
    return parseTarget(text.split('/').length === 2 && !isClusterScopedTarget(text) ? `vm/${text}` : text);
  } catch (err) {
    if (err instanceof BadTargetError) throw new HttpError(400, err.message);
    throw err;
  }
}

/** Validates a replay request at the edge; like the CLI, it must say `key` or `all`. */
export function replayFilter(body: unknown): ReplayFilter {
  if (typeof body !== 'object' || body === null) throw new HttpError(400, 'expected {"key": "ns/name"} or {"all": true}');
  const b = body as Record<string, unknown>;
  let controller: Controller | undefined;
  if (b.controller !== undefined) {
    if (!isController(b.controller)) throw new HttpError(400, `controller must be one of ${CONTROLLERS.join(', ')}`);
    controller = b.controller;
  }
  if (b.all === true && b.key !== undefined) throw new HttpError(400, 'key and all exclude each other');
  if (b.all === true) return controller ? { controller } : {};
  if (typeof b.key !== 'string' || !isKey(b.key, controller ? controllerInfo(controller).keyScope : undefined)) throw new HttpError(400, 'expected {"key": "ns/name"} or {"all": true}');
  return { key: b.key, ...(controller ? { controller } : {}) };
}
