/**
 * client-node API clients that keep their connections (`pooledApiClient`).
 *
 * `KubeConfig.makeApiClient` authenticates each request with `applySecurityAuthentication`, which
 * builds a new undici `Agent` for the request whenever the cluster has any TLS setting (a CA,
 * a client certificate, or `skipTLSVerify`, which is every real cluster and the sandbox): so
 * every request opens a new connection (a TCP and, for https, a TLS handshake, on both sides),
 * and leaves an idle socket behind. In a 1,000-VMI burst the connects, closes and undici's
 * `InformationalError('reset')` (built with its stack for every connection it lets go) were about
 * a tenth of the system's CPU.
 *
 * This authentication does what client-node's does — the same options (`applyToHTTPSOptions`: tokens, exec and
 * OIDC credentials, client certificates, impersonation), basic auth, headers and the same
 * dispatcher options (`createDispatcherOptions`) — and hands the request one undici `Agent`
 * per distinct TLS material, created once and kept: keep-alive connections, reused. Rotated
 * credentials (an exec plugin's new certificate) are new material, so a new agent. A proxy or
 * SOCKS cluster is left to client-node as it is.
 */
import { createHash } from 'node:crypto';
import type { AgentOptions, RequestOptions } from 'node:https';
import { createConfiguration, ServerConfiguration, setHeaderMiddleware, type KubeConfig, type RequestContext, type SecurityAuthentication } from '@kubernetes/client-node';
import { Agent } from 'undici';

/** Connections kept per agent (per host): enough for a function's or the relay's concurrency. */
const CONNECTIONS_PER_AGENT = 64;

/**
 * How much sooner than the server's `Keep-Alive: timeout=` hint an idle connection is let go.
 * undici's default, 2 s, is the sandbox API server's whole hint (2 s, sandbox/apiserver), so
 * undici reset every connection after its first answer; 0.5 s still leaves the server's close
 * well after ours. A real kube-apiserver sends no hint: undici's own 4 s idle timeout applies.
 */
const KEEP_ALIVE_MARGIN_MS = 500;

/** The agents by TLS material: one process rarely sees more than one or two. */
const agents = new Map<string, Agent>();

function keyOf(connect: Record<string, unknown>): string {
  const h = createHash('sha256');
  for (const k of Object.keys(connect).sort()) {
    const v = connect[k];
    h.update(`${k}=`);
    if (Buffer.isBuffer(v)) h.update(v);
    else h.update(JSON.stringify(v ?? null));
    h.update('\0');
  }
  return h.digest('hex');
}

/**
 * The connect options last seen and their key: a process asks with the same options on every
 * request, and hashing its certificates each time was a measurable part of a request's cost.
 */
let lastConnect: { connect: Record<string, unknown>; key: string } | undefined;

/** Equal as {@link keyOf} would hash them: buffers by their bytes, the rest by its JSON. */
function sameValue(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (Buffer.isBuffer(x) || Buffer.isBuffer(y)) return Buffer.isBuffer(x) && Buffer.isBuffer(y) && x.equals(y);
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => sameValue(v, y[i]));
  return JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
}

function sameConnect(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameValue(a[k], b[k]));
}

/** The kept agent for these connect options. */
function agentFor(connect: Record<string, unknown>): Agent {
  const key = lastConnect && sameConnect(lastConnect.connect, connect) ? lastConnect.key : keyOf(connect);
  lastConnect = { connect, key };
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect, connections: CONNECTIONS_PER_AGENT, keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS });
    agents.set(key, agent);
  }
  return agent;
}

/** client-node's kubeconfig authentication, with kept connections. */
export function pooledAuthentication(kc: KubeConfig): SecurityAuthentication {
  return {
    getName: () => 'kubeconfig authentication (kept connections)',
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      const cluster = kc.getCurrentCluster();
      if (cluster?.proxyUrl) return kc.applySecurityAuthentication(context);
      const user = kc.getCurrentUser();
      const https: RequestOptions = {};
      // Tokens, exec and OIDC credentials, client certificates, impersonation: client-node's own.
      await kc.applyToHTTPSOptions(https);
      if (user?.username) context.setHeaderParam('Authorization', `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`);
      for (const [k, v] of Object.entries(https.headers ?? {})) context.setHeaderParam(k, `${v}`);
      const agentOptions: AgentOptions = { ca: https.ca, cert: https.cert, key: https.key, pfx: https.pfx, passphrase: https.passphrase };
      if (https.rejectUnauthorized !== undefined) agentOptions.rejectUnauthorized = https.rejectUnauthorized;
      if (https.servername !== undefined) agentOptions.servername = https.servername;
      const opts = kc.createDispatcherOptions(cluster, agentOptions);
      if (opts.type === 'agent') context.setDispatcher(agentFor(opts.connect as Record<string, unknown>));
      else if (opts.type !== 'none') return kc.applySecurityAuthentication(context);
    },
  };
}

/** The API client `kc.makeApiClient(type)` would make, authenticating with {@link pooledAuthentication}. */
export function pooledApiClient<T>(kc: KubeConfig, apiClientType: new (config: ReturnType<typeof createConfiguration>) => T): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig: no current cluster (set current-context, or a context naming a cluster)');
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: pooledAuthentication(kc) },
    middleware: [setHeaderMiddleware('User-Agent', `virt-reconciler (kubernetes-client-javascript)`)],
  });
  return new apiClientType(config);
}
