/**
 * {@link KubeClient} over Node's built-in `node:http` / `node:https`: the same requests as
 * client-node.ts (docs/kube-client.md, "client-node as it behaves on the wire") without `@kubernetes/client-node` and undici, which are most
 * of a Lambda bundle and of its cold start (docs/platform.md, docs/kube-client.md). The Lambda
 * functions use this one; the relay, the local runtime and the tools keep client-node.
 *
 * Both implementations share requests.ts (paths, query parameters, bodies, the Event) and
 * errors.ts (`toKubeError`): a non-2xx answer is thrown as {@link HttpStatusError}, shaped like
 * client-node's `ApiException` (`code`, raw `body` text, `headers`), so it maps to exactly the same
 * classes. A failure before any answer (refused, reset, TLS, timeout) is a `KubeTransientError`
 * `ServerError`, as client-node's `fetch failed` is.
 *
 * The verbs themselves are requests.ts's {@link genericKubeClient}; this file is only the transport.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { KubeClient } from './client.ts';
import { caPem, validateConnection, type KubeConnection } from './connection.ts';
import { KubeTransientError, type ApiRequest } from './errors.ts';
import { IMPERSONATE_USER_HEADER } from './kubevirt-identity.ts';
import { apiRequest, genericKubeClient, operationPath, type KubeClientOptions, type Operation } from './requests.ts';

/** Settings of {@link createHttpKubeClient}. */
export interface HttpKubeClientOptions extends KubeClientOptions {
  /** Give up on a request after this long without an answer (→ ServerError). Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Concurrent connections to the API server. Default 32. */
  readonly maxSockets?: number;
}

/** The client, plus `close()` to drop its idle keep-alive connections. */
export interface HttpKubeClient extends KubeClient {
  close(): void;
}

/** A non-2xx answer, shaped like client-node's `ApiException` so `toKubeError` maps both alike. */
export class HttpStatusError extends Error {
  /** HTTP status. */
  readonly code: number;
  /** The raw response text (a Status JSON, usually). */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  constructor(code: number, body: string, headers: IncomingHttpHeaders) {
    super(`HTTP ${code}`);
    this.name = 'HttpStatusError';
    this.code = code;
    this.body = body;
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
    this.headers = flat;
  }
}

type Query = Readonly<Record<string, string | number | undefined>>;

interface Outgoing {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly contentType?: string;
  /** `Impersonate-User` (kubevirt-identity.ts). */
  readonly impersonateUser?: string;
}

/** Form-encoded like client-node's (space → `+`, `,` → `%2C`…), keys sorted for stable URLs. */
function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const k of Object.keys(query ?? {}).sort()) {
    const v = query?.[k];
    if (v !== undefined && v !== '') params.append(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** One HTTP exchange with the API server; resolves with the parsed JSON of a 2xx answer. */
type Send = (out: Outgoing, request: ApiRequest) => Promise<unknown>;

function transport(connection: KubeConnection, options: HttpKubeClientOptions): { send: Send; close: () => void } {
  const url = validateConnection(connection);
  const https = url.protocol === 'https:';
  const tls = https ? { rejectUnauthorized: connection.skipTLSVerify !== true, ...(connection.caData ? { ca: caPem(connection.caData) } : {}) } : {};
  // Keep-alive: a warm function reuses its connection (and its TLS session) across reconciles.
  const agent = https
    ? new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 32, scheduling: 'lifo', ...tls })
    : new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 32, scheduling: 'lifo' });
  const doRequest = https ? httpsRequest : httpRequest;
  const prefix = url.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;

  function once(out: Outgoing, token: string | undefined): Promise<{ res: IncomingMessage; text: string } | { err: Error; req: ClientRequest }> {
    const payload = out.body === undefined ? undefined : JSON.stringify(out.body);
    const headers: Record<string, string | number> = { Accept: 'application/json, */*;q=0.8' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (out.impersonateUser) headers[IMPERSONATE_USER_HEADER] = out.impersonateUser;
    if (payload !== undefined) {
      headers['Content-Type'] = out.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    return new Promise((resolve) => {
      const req = doRequest({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (https ? 443 : 80),
        method: out.method,
        path: prefix + out.path + queryString(out.query),
        headers,
        agent,
        ...tls,
      });
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', (err) => resolve({ err, req }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => resolve({ err, req }));
        res.on('end', () => resolve({ res, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.end(payload);
    });
  }

  const send: Send = async (out, request) => {
    const token = connection.token ? await connection.token() : undefined;
    for (let attempt = 0; ; attempt++) {
      const r = await once(out, token);
      if ('err' in r) {
        // A kept-alive socket the server closed while we were idle (a frozen Lambda, an LB idle
        // timeout) fails on first write. A GET never reached the server then: send it once more.
        // Writes are not repeated: a create might have been applied.
        const code = (r.err as { code?: unknown }).code;
        if (attempt === 0 && out.method === 'GET' && r.req.reusedSocket && code === 'ECONNRESET') continue;
        throw new KubeTransientError('ServerError', request, `network error: ${typeof code === 'string' ? code : r.err.message}`, { cause: r.err });
      }
      const status = r.res.statusCode ?? 0;
      if (status < 200 || status > 299) throw new HttpStatusError(status, r.text, r.res.headers);
      if (r.text === '') return undefined;
      try {
        return JSON.parse(r.text) as unknown;
      } catch (err) {
        throw new KubeTransientError('ServerError', request, `HTTP ${status} with a body that is not JSON`, { status, cause: err });
      }
    }
  };
  return { send, close: () => agent.destroy() };
}

/** The node:http implementation of {@link KubeClient}. Create one per process (cold start). */
export function createHttpKubeClient(connection: KubeConnection, options: HttpKubeClientOptions = {}): HttpKubeClient {
  const { send, close } = transport(connection, options);
  const client = genericKubeClient(
    {
      send: (o: Operation) =>
        send(
          {
            method: o.method,
            path: operationPath(o),
            query: o.query,
            ...(o.body !== undefined ? { body: o.body } : {}),
            ...(o.contentType ? { contentType: o.contentType } : {}),
            ...(o.impersonateUser ? { impersonateUser: o.impersonateUser } : {}),
          },
          apiRequest(o.res, o.verb, o.namespace, o.name, o.subresource),
        ),
    },
    options,
  );
  return { ...client, close };
}
