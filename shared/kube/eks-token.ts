/**
 * EKS IAM authentication for `@kubernetes/client-node` (used outside Lambda: tests, tools, a
 * relay that talks to EKS with IAM). Token minting itself is in eks-iam-token.ts (no client-node,
 * bundled into the functions) and re-exported here, so existing importers keep one entry point.
 *
 * Seam: {@link eksAuthenticator} is a client-node authenticator (shared/kube/config.ts's
 * `authenticators` option); {@link eksKubeConfig} builds a whole KubeConfig from endpoint + CA.
 * In Lambda, connection.ts + http-client.ts do the same without client-node.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidInputError } from '../errors.ts';
import type { Authenticator } from './config.ts';
import { EKS_ENV, eksTokenProvider, type CredentialSource } from './eks-iam-token.ts';

export * from './eks-iam-token.ts';

/** The synthetic kubeconfig user that {@link eksAuthenticator} recognises. */
export const EKS_AUTH_PROVIDER = 'eks-iam';

/** A client-node authenticator that puts a fresh EKS token on every request of an `eks-iam` user. */
export function eksAuthenticator(token: () => Promise<string>): Authenticator {
  return {
    isAuthProvider: (user) => (user.authProvider as { name?: string } | undefined)?.name === EKS_AUTH_PROVIDER,
    async applyAuthentication(_user, opts) {
      const headers = (opts.headers ?? {}) as IncomingHttpHeaders;
      headers.authorization = `Bearer ${await token()}`;
      opts.headers = headers;
    },
  };
}

export interface EksClusterOptions {
  readonly clusterName: string;
  /** `https://….eks.amazonaws.com`. */
  readonly endpoint: string;
  /** The cluster CA, base64 PEM (as `aws eks describe-cluster` gives `certificateAuthority.data`). */
  readonly caData: string;
  readonly region: string;
  readonly credentials?: CredentialSource;
  /** Token source; default {@link eksTokenProvider} over the other options. */
  readonly token?: () => Promise<string>;
}

/** A KubeConfig for an EKS cluster authenticated by the caller's IAM identity. */
export function eksKubeConfig(opts: EksClusterOptions): KubeConfig {
  if (!/^https:\/\//.test(opts.endpoint)) throw new InvalidInputError('endpoint', `the EKS endpoint must be https, got "${opts.endpoint}"`);
  if (!opts.caData) throw new InvalidInputError('caData', 'the cluster CA is empty');
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: opts.clusterName, server: opts.endpoint, caData: opts.caData, skipTLSVerify: false },
    { name: `${opts.clusterName}-iam`, authProvider: { name: EKS_AUTH_PROVIDER, config: {} } },
  );
  const token =
    opts.token ??
    eksTokenProvider({ clusterName: opts.clusterName, region: opts.region, ...(opts.credentials !== undefined ? { credentials: opts.credentials } : {}) });
  kc.addAuthenticator(eksAuthenticator(token));
  return kc;
}

/**
 * The function's KubeConfig from the environment the CDK stack sets ({@link EKS_ENV} + `AWS_REGION`),
 * or undefined when `EKS_CLUSTER_ENDPOINT` is unset (then use `loadKubeConfig()`).
 */
export function eksKubeConfigFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): KubeConfig | undefined {
  const endpoint = env[EKS_ENV.endpoint];
  if (!endpoint) return undefined;
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new InvalidInputError(name, `${EKS_ENV.endpoint} is set but ${name} is not`);
    return v;
  };
  return eksKubeConfig({
    endpoint,
    clusterName: need(EKS_ENV.clusterName),
    caData: need(EKS_ENV.caData),
    region: env.AWS_REGION || need('AWS_DEFAULT_REGION'),
  });
}
