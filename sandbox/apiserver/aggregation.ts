/**
 * API aggregation, as kube-apiserver's aggregator does it for an APIService: requests under
 * `/apis/<group>/` are passed to the server registered for that group and its answer is returned
 * as it is. The sandbox registers virt-api's `subresources.kubevirt.io` (freeze, unfreeze, pause,
 * backup, stop…: sandbox/virt-api/server.ts), so a client that calls the subresource API through
 * the API server — KubeVirt's own virt-controller does — reaches it as on a cluster. The caller's
 * identity travels in its Authorization header; the emulator checks none (it has no RBAC).
 */
import { request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Group → base URL of the server that serves it. */
export class Aggregation {
  readonly #groups = new Map<string, string>();

  /** Serves `/apis/<group>/…` from `baseUrl`; returns the function that removes it. */
  add(group: string, baseUrl: string): () => void {
    this.#groups.set(group, baseUrl.replace(/\/+$/, ''));
    return () => {
      if (this.#groups.get(group) === baseUrl.replace(/\/+$/, '')) this.#groups.delete(group);
    };
  }

  /** The base URL a path is served from, if its group is aggregated. */
  target(path: string): string | undefined {
    const group = /^\/apis\/([^/]+)(\/|$)/.exec(path)?.[1];
    return group === undefined ? undefined : this.#groups.get(group);
  }

  /** Passes the request to `base` and its answer back; a server that does not answer is a 503, as the aggregator's. */
  proxy(base: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const url = new URL(req.url ?? '/', base);
      const up = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => resolve());
        answer.on('error', () => resolve());
      });
      up.on('error', (err) => {
        if (!res.headersSent) {
          res.writeHead(503, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `error trying to reach service: ${err.message}`, reason: 'ServiceUnavailable', code: 503 }));
        } else res.end();
        resolve();
      });
      req.pipe(up);
    });
  }
}
