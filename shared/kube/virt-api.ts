/**
 * KubeVirt's subresource API (`subresources.kubevirt.io/v1`, served by virt-api): the PUTs the
 * storage controllers make — a VMI's `freeze` / `unfreeze` (snapshot), `backup`,
 * `redefine-checkpoint`, a VM's `stop` (restore's `StopTarget`). In a cluster the API server
 * aggregates virt-api, so the base URL is the API server's; the sandbox runs its virt-api on a
 * port of its own (sandbox/virt-api/server.ts) and the runtime is pointed at it.
 *
 * Over `node:http` / `node:https` like http-client.ts (no client-node in Lambda bundles). A
 * non-2xx answer is a {@link VirtApiError} carrying the Status message, which is what KubeVirt
 * records (e.g. a content's `status.error.message` "Guest agent is not responding").
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { TransientError } from '../errors.ts';
import { caPem, validateConnection, type KubeConnection } from './connection.ts';

/** What the subresources are on. */
export type VirtSubresourceTarget = 'virtualmachineinstances' | 'virtualmachines';

/** The subresource calls, one HTTP request each. */
export interface VirtApiClient {
  /** `PUT /apis/subresources.kubevirt.io/v1/namespaces/<ns>/<target>/<name>/<verb>` with a JSON body. */
  put(target: VirtSubresourceTarget, namespace: string, name: string, verb: string, body?: unknown): Promise<void>;
}

/** virt-api refused (or could not be reached): `code` is the HTTP status (0 = no answer). */
export class VirtApiError extends TransientError {
  readonly code: number;
  constructor(code: number, message: string) {
    super('VirtApiError', message);
    this.code = code;
  }
}

/** The path of one subresource call. */
export function subresourcePath(target: VirtSubresourceTarget, namespace: string, name: string, verb: string): string {
  return `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/${target}/${encodeURIComponent(name)}/${verb}`;
}

/** The Status message of an error answer, else its text. */
function messageOf(code: number, text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // not a Status: the raw text says it
  }
  return text.trim() || `HTTP ${code}`;
}

/** A client for the subresource API at `connection.server` (the API server, or the sandbox's virt-api). */
export function createVirtApiClient(connection: KubeConnection, opts: { timeoutMs?: number } = {}): VirtApiClient {
  const url = validateConnection(connection);
  const https = url.protocol === 'https:';
  const base = url.pathname.replace(/\/$/, '');
  return {
    async put(target, namespace, name, verb, body = {}) {
      const token = connection.token ? await connection.token() : undefined;
      const payload = JSON.stringify(body);
      const options = {
        method: 'PUT',
        hostname: url.hostname,
        port: url.port || (https ? 443 : 80),
        path: base + subresourcePath(target, namespace, name, verb),
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(payload), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        timeout: opts.timeoutMs ?? 30_000,
        ...(https ? { rejectUnauthorized: connection.skipTLSVerify !== true, ...(connection.caData ? { ca: caPem(connection.caData) } : {}) } : {}),
      };
      const answer = await new Promise<{ code: number; text: string }>((resolve, reject) => {
        const req = (https ? httpsRequest : httpRequest)(options, (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', (err: NodeJS.ErrnoException) => reject(new VirtApiError(0, `network error: ${err.code ?? err.message}`)));
        req.end(payload);
      });
      if (answer.code < 200 || answer.code >= 300) throw new VirtApiError(answer.code, messageOf(answer.code, answer.text));
    },
  };
}

/** The subresource API's connection from the environment: `VIRT_API_URL` when set, else the API server's. */
export function virtApiConnection(kube: KubeConnection, env: Readonly<Record<string, string | undefined>> = process.env): KubeConnection {
  const url = env.VIRT_API_URL;
  return url ? { ...kube, server: url, skipTLSVerify: kube.skipTLSVerify === true || url.startsWith('http:') } : kube;
}

/** A runtime with no virt-api (a chaos or bench harness without the storage side): every call fails, retried like any refusal. */
export const NO_VIRT_API: VirtApiClient = {
  async put(target, namespace, name, verb) {
    throw new VirtApiError(0, `no virt-api configured for ${verb} of ${target} ${namespace}/${name}`);
  },
};
