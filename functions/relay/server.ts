/**
 * The relay's HTTP face, what the Deployment's probes and Prometheus talk to:
 * - `/healthz` — the process is alive and its event loop answers (liveness);
 * - `/readyz`  — every watched resource has been listed once and the outbox is not stuck
 *   (sends failing for longer than `stuckAfterMs` while keys wait); 503 with the reason otherwise;
 * - `/metrics` — the relay's MetricsRegistry in the Prometheus text format: KubeVirt's
 *   virt-controller metrics (functions/relay/metrics/; docs/operations.md) and the relay's own
 *   client-go-style names (`workqueue_adds_total{name}`, `relay_watch_restarts_total{kind,why}`, …).
 * Listens on 127.0.0.1 unless told otherwise; a pod passes `0.0.0.0` so the kubelet can probe it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { WatchedKind } from '../../shared/relay/route.ts';

/** What the server reads from the relay (declared narrowly, where it is used). */
export interface RelayStatus {
  readonly metrics: MetricsRegistry;
  readonly watchedObjects: number;
  unsynced(): WatchedKind[];
  outboxHealth(): { pending: number; failures: number; failingSince: number | undefined };
}

export interface RelayServerOptions {
  readonly relay: RelayStatus;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** Sends failing this long with keys waiting → not ready. Default 60 s. */
  readonly stuckAfterMs?: number;
  /** Epoch ms. */
  readonly now?: () => number;
}

export interface RelayServer {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Ready, or why not: the text `/readyz` answers. */
export function readiness(relay: RelayStatus, now: number, stuckAfterMs: number): { ready: true } | { ready: false; reason: string } {
  const unsynced = relay.unsynced();
  if (unsynced.length > 0) return { ready: false, reason: `initial list not complete for: ${unsynced.join(', ')}` };
  const o = relay.outboxHealth();
  // A queue outage shorter than the threshold is ridden out by the outbox's retries; longer, and
  // the replica should leave the Service so an operator sees it (keys are kept, never dropped).
  if (o.pending > 0 && o.failingSince !== undefined && now - o.failingSince >= stuckAfterMs) {
    const seconds = Math.round((now - o.failingSince) / 1000);
    return { ready: false, reason: `outbox stuck: ${o.pending} keys unsent, queue sends failing for ${seconds}s (${o.failures} attempts)` };
  }
  return { ready: true };
}

/** Starts the server; resolves once it listens. */
export async function startRelayServer(opts: RelayServerOptions): Promise<RelayServer> {
  const now = opts.now ?? Date.now;
  const stuckAfterMs = opts.stuckAfterMs ?? 60_000;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed\n');
    switch (path) {
      case '/healthz':
      case '/livez':
        return reply(res, 200, 'ok\n');
      case '/readyz': {
        const r = readiness(opts.relay, now(), stuckAfterMs);
        return r.ready ? reply(res, 200, 'ok\n') : reply(res, 503, `not ready: ${r.reason}\n`);
      }
      case '/metrics':
        return reply(res, 200, renderMetrics(opts.relay), 'text/plain; version=0.0.4; charset=utf-8');
      default:
        return reply(res, 404, 'not found\n');
    }
  };
  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Point-in-time gauges are set at scrape time, then the whole registry is rendered. */
function renderMetrics(relay: RelayStatus): string {
  const o = relay.outboxHealth();
  relay.metrics.set('relay_outbox_depth', 'Keys waiting to be sent', {}, o.pending);
  relay.metrics.set('relay_watched_objects', 'Objects the relay currently knows of, over all resources', {}, relay.watchedObjects);
  relay.metrics.set('relay_unsynced_resources', 'Watched resources whose first list has not completed', {}, relay.unsynced().length);
  return relay.metrics.render();
}

function reply(res: ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
