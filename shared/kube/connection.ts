/**
 * How the fetch-free client (http-client.ts) reaches an API server: URL, trust, and a bearer token
 * source — everything a kubeconfig would say, minus the kubeconfig (and minus client-node, which
 * is most of a Lambda bundle's size and cold start: docs/kube-client.md).
 *
 * In Lambda the connection comes from the environment ({@link connectionFromEnv}), first match wins:
 * 1. EKS with the function's IAM role: `EKS_CLUSTER_ENDPOINT`, `EKS_CLUSTER_NAME`,
 *    `EKS_CLUSTER_CA_DATA`, region from `AWS_REGION` (what the CDK stack sets);
 * 2. a plain server: `KUBE_API_SERVER`, optional `KUBE_TOKEN`, `KUBE_CA_DATA`,
 *    `KUBE_INSECURE_SKIP_TLS_VERIFY=true` (e.g. a handler run against the sandbox cluster).
 */
import { InvalidInputError } from '../errors.ts';
import { EKS_ENV, eksTokenProvider } from './eks-iam-token.ts';

/** Where the API server is and how to authenticate to it. */
export interface KubeConnection {
  /** `https://host[:port]`; `http://` only with {@link skipTLSVerify} (as client-node insists). */
  readonly server: string;
  /** The cluster CA: base64 of the PEM (kubeconfig `certificate-authority-data`), or the PEM itself. */
  readonly caData?: string | undefined;
  /** Do not verify the server's certificate (sandbox and tests only). */
  readonly skipTLSVerify?: boolean | undefined;
  /** Bearer token source, asked before every request (so EKS tokens renew); none = anonymous. */
  readonly token?: (() => Promise<string>) | undefined;
  /** One line for the startup log: which source, which server (never the token). */
  readonly description?: string | undefined;
}

/** The plain-server variables, for running a handler against any API server. */
export const KUBE_ENV = {
  server: 'KUBE_API_SERVER',
  token: 'KUBE_TOKEN',
  caData: 'KUBE_CA_DATA',
  insecure: 'KUBE_INSECURE_SKIP_TLS_VERIFY',
} as const;

/** Neither connection source is configured, or one is incomplete; the message names the variables. */
export class KubeConnectionError extends InvalidInputError {
  constructor(field: string, message: string) {
    super(field, message, 'InvalidKubeConnection');
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '') return false;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw new KubeConnectionError(name, `${name} must be true or false, got "${value}"`);
}

/** The PEM text of a CA given as base64 (kubeconfig style) or as PEM. */
export function caPem(caData: string): string {
  return caData.trimStart().startsWith('-----BEGIN') ? caData : Buffer.from(caData, 'base64').toString('utf8');
}

/** Checks a connection's server URL and TLS settings; returns the parsed URL. */
export function validateConnection(c: KubeConnection): URL {
  let url: URL;
  try {
    url = new URL(c.server);
  } catch {
    throw new KubeConnectionError('server', `the API server URL "${c.server}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new KubeConnectionError('server', `the API server URL must be https, got "${c.server}"`);
  // Same rule as client-node: a bearer token over plain HTTP only when the caller said TLS is off.
  if (url.protocol === 'http:' && c.skipTLSVerify !== true) {
    throw new KubeConnectionError('server', `HTTP protocol is not allowed when skipTLSVerify is not set (server "${c.server}")`);
  }
  return url;
}

/**
 * The connection described by the environment (see the file header), or a
 * {@link KubeConnectionError} naming the variables to set.
 */
export function connectionFromEnv(env: Env = process.env): KubeConnection {
  const eksEndpoint = env[EKS_ENV.endpoint];
  if (eksEndpoint) {
    const need = (name: string): string => {
      const v = env[name];
      if (!v) throw new KubeConnectionError(name, `${EKS_ENV.endpoint} is set but ${name} is not`);
      return v;
    };
    const clusterName = need(EKS_ENV.clusterName);
    const caData = need(EKS_ENV.caData);
    const region = env.AWS_REGION || need('AWS_DEFAULT_REGION');
    if (!/^https:\/\//.test(eksEndpoint)) throw new KubeConnectionError(EKS_ENV.endpoint, `the EKS endpoint must be https, got "${eksEndpoint}"`);
    return {
      server: eksEndpoint,
      caData,
      token: eksTokenProvider({ clusterName, region }),
      description: `EKS cluster ${clusterName} (${region}) at ${eksEndpoint}, IAM token`,
    };
  }
  const server = env[KUBE_ENV.server];
  if (server) {
    const token = env[KUBE_ENV.token];
    const connection: KubeConnection = {
      server,
      caData: env[KUBE_ENV.caData] || undefined,
      skipTLSVerify: flag(env[KUBE_ENV.insecure], KUBE_ENV.insecure),
      token: token ? async () => token : undefined,
      description: `API server ${server} from ${KUBE_ENV.server}${token ? `, token from ${KUBE_ENV.token}` : ', no token'}`,
    };
    validateConnection(connection);
    return connection;
  }
  throw new KubeConnectionError(
    KUBE_ENV.server,
    `no Kubernetes connection: set ${EKS_ENV.endpoint}, ${EKS_ENV.clusterName} and ${EKS_ENV.caData} (EKS, IAM auth), ` +
      `or ${KUBE_ENV.server} (+ ${KUBE_ENV.token}, ${KUBE_ENV.caData}, ${KUBE_ENV.insecure})`,
  );
}
