/**
 * What `@aws-sdk/credential-provider-node` becomes in the Lambda bundles (scripts/build.ts aliases
 * that package to this file for them, and only for them): the SDK's default credential chain cut
 * down to its first link, the environment.
 *
 * Why: the full chain (env → SSO → ini/profile → process → web identity → container/IMDS) is
 * imported statically by every SDK client's runtime config, and with it the SSO, SSO-OIDC, STS
 * and sign-in clients (`@aws-sdk/nested-clients`) — a large part of each bundle's cold import.
 * In Lambda none of the other links is ever reached: the runtime sets `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (the function's role) before the code loads,
 * and the chain tries the environment first. So on AWS the answer is the same, from the same code
 * (the SDK's own `fromEnv`). Outside Lambda (CLI, relay, local runtime, tests run from source)
 * nothing changes: they import the real package.
 *
 * Hazard: a Lambda bundle run somewhere without those variables fails its first AWS call with
 * "Unable to find environment variable credentials." instead of looking for a profile. Set them
 * (the bundle smoke tests do).
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { AwsCredentialIdentityProvider, Logger } from '@smithy/types';

export { fromEnv };

/** What the SDK clients pass to the default provider; only the logger matters to `fromEnv`. */
export interface DefaultProviderInit {
  readonly logger?: Logger;
}

/**
 * Same name and call shape as `@aws-sdk/credential-provider-node`'s `defaultProvider` (what the
 * SDK clients' runtime configs and shared/kube/eks-iam-token.ts call): credentials from the
 * environment only, read on every call (the SDK memoizes resolved identities itself).
 */
export function defaultProvider(init: DefaultProviderInit = {}): AwsCredentialIdentityProvider {
  return fromEnv(init.logger !== undefined ? { logger: init.logger } : {});
}
