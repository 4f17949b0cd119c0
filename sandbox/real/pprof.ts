/**
 * Go CPU profiles of the real control plane's processes (`control-plane serve --pprof-addr`,
 * infra/control-plane/pprof.go): `serve` (this binary's parent process, with etcd embedded) on a
 * plain-HTTP loopback port, kube-apiserver, kube-controller-manager and kube-scheduler on their
 * secure ports behind authentication (an admin token and the cluster's CA). A profile is
 * `GET <base>/profile?seconds=N`: it answers after N seconds with a gzipped pprof protobuf.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** How to reach one component's /debug/pprof. */
export interface PprofEndpoint {
  /** e.g. `https://127.0.0.1:6443/debug/pprof`. */
  readonly base: string;
  /** Bearer token for the secure ports (a system:masters identity's). */
  readonly token?: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly ca?: string;
  /**
   * The serving certificate is self-signed at start (kube-controller-manager's and
   * kube-scheduler's: no CA of ours signed it), so it is not verified. Loopback only: the
   * binary reported the port.
   */
  readonly selfSigned?: boolean;
}

/** The CPU profile of the next `seconds` seconds (gzipped pprof protobuf); rejects on a non-200 answer. */
export function fetchCpuProfile(endpoint: PprofEndpoint, seconds: number): Promise<Buffer> {
  const url = new URL(`${endpoint.base}/profile?seconds=${Math.max(1, Math.round(seconds))}`);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: endpoint.token ? { Authorization: `Bearer ${endpoint.token}` } : {},
        ...(endpoint.ca ? { ca: endpoint.ca } : {}),
        ...(endpoint.selfSigned ? { rejectUnauthorized: false } : {}),
        // The answer comes after the profile's seconds: no socket timeout shorter than that.
        timeout: (seconds + 30) * 1000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          if (res.statusCode === 200) resolve(body);
          else reject(new Error(`pprof ${url.href}: HTTP ${res.statusCode}: ${body.toString('utf8').slice(0, 200)}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`pprof ${url.href}: no answer within ${seconds + 30} s`)));
    req.on('error', reject);
    req.end();
  });
}
