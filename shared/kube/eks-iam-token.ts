/**
 * EKS authentication with an IAM identity (the Lambda function's role): no long-lived secret,
 * no kubeconfig file, no `aws` binary. This file mints tokens only and does not import
 * `@kubernetes/client-node`, so the Lambda bundles can use it (connection.ts); the client-node
 * helpers (authenticator, KubeConfig) live in eks-token.ts, which re-exports everything here.
 *
 * Protocol (what `aws eks get-token` and aws-iam-authenticator do): presign an STS
 * `GetCallerIdentity` GET with SigV4, signing the extra header `x-k8s-aws-id: <cluster name>`,
 * `X-Amz-Expires=60`; the bearer token is `k8s-aws-v1.` + base64url(presigned URL) without
 * padding. The apiserver's authenticator replays the URL against STS to learn the caller's ARN,
 * which an EKS access entry (or the aws-auth ConfigMap) maps to a Kubernetes user/group.
 * EKS accepts a token for 15 minutes from its signing time; we renew well before that.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { InvalidInputError } from '../errors.ts';

/** Prefix of every EKS IAM bearer token. */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header that binds a token to one cluster (signed, so it cannot be replayed elsewhere). */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** The presigned URL's lifetime; EKS requires 60. */
export const PRESIGN_EXPIRES_SECONDS = 60;
/** Renew a cached token after this long (EKS accepts it for 15 min; `aws eks get-token` says 14). */
export const TOKEN_RENEW_AFTER_MS = 10 * 60_000;

/** Environment variables the CDK stack sets on every function (docs/deploy-aws.md). */
export const EKS_ENV = {
  clusterName: 'EKS_CLUSTER_NAME',
  endpoint: 'EKS_CLUSTER_ENDPOINT',
  caData: 'EKS_CLUSTER_CA_DATA',
} as const;

export type CredentialSource = AwsCredentialIdentity | Provider<AwsCredentialIdentity>;

export interface EksTokenOptions {
  readonly clusterName: string;
  /** Region of the STS endpoint (the cluster's region). */
  readonly region: string;
  /** Default: the SDK's provider chain (in Lambda: the role's session from the environment). */
  readonly credentials?: CredentialSource;
  /** Signing time (tests fix it); default now. */
  readonly now?: Date;
}

export interface EksToken {
  readonly token: string;
  /** When the token was signed. */
  readonly signedAt: Date;
}

/** Builds one token. Pure given fixed credentials and `now`. */
export async function eksToken(opts: EksTokenOptions): Promise<EksToken> {
  if (!opts.clusterName) throw new InvalidInputError('clusterName', 'the EKS cluster name is empty');
  if (!opts.region) throw new InvalidInputError('region', 'the AWS region is empty');
  const hostname = `sts.${opts.region}.amazonaws.com`;
  const signer = new SignatureV4({ service: 'sts', region: opts.region, credentials: opts.credentials ?? defaultProvider(), sha256: Sha256 });
  const signedAt = opts.now ?? new Date();
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: opts.clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: signedAt },
  );
  const url = `https://${hostname}/?${queryString(signed.query)}`;
  return { token: EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url'), signedAt };
}

/** RFC 3986 query encoding, keys sorted (the credential scope's `/` and a session token's `+/=` must be escaped). */
function queryString(query: Record<string, string | string[] | null> | undefined): string {
  const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return Object.keys(query ?? {})
    .sort()
    .flatMap((k) => {
      const v = query?.[k];
      const values = v === null || v === undefined ? [] : Array.isArray(v) ? v : [v];
      return values.map((x) => `${enc(k)}=${enc(x)}`);
    })
    .join('&');
}

/** Decodes a token back to its presigned URL (diagnostics and tests). */
export function decodeEksToken(token: string): URL {
  if (!token.startsWith(EKS_TOKEN_PREFIX)) throw new InvalidInputError('token', `an EKS token starts with ${EKS_TOKEN_PREFIX}`);
  return new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}

/**
 * A cached token source: one signature per {@link TOKEN_RENEW_AFTER_MS}, shared by every request
 * of a warm function (signing is cheap, but credential resolution on a cold start is not).
 */
export function eksTokenProvider(opts: Omit<EksTokenOptions, 'now'> & { clock?: () => number }): () => Promise<string> {
  const clock = opts.clock ?? Date.now;
  let cached: Promise<EksToken> | undefined;
  return async () => {
    const current = cached === undefined ? undefined : await cached.catch(() => undefined);
    if (current !== undefined && clock() - current.signedAt.getTime() < TOKEN_RENEW_AFTER_MS) return current.token;
    cached = eksToken({ ...opts, now: new Date(clock()) });
    return (await cached).token;
  };
}
