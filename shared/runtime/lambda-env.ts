/**
 * What every Lambda function builds once per cold start from its environment (the CDK stack sets
 * it, docs/deploy-aws.md): the SQS key queue, the DynamoDB state table, the Kubernetes client
 * (EKS IAM auth, or `KUBE_API_SERVER` for testing: connection.ts), a JSON logger and the metrics
 * registry. Module-level state is limited to these SDK clients (docs/architecture.md §6.5).
 *
 * The Kubernetes client is the node:http one (http-client.ts), not client-node: nothing reachable
 * from here may import `@kubernetes/client-node` at runtime, or it is back in every bundle
 * (docs/kube-client.md). No kubeconfig is read inside Lambda.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { KubeClient } from '../kube/client.ts';
import { connectionFromEnv } from '../kube/connection.ts';
import { createHttpKubeClient } from '../kube/http-client.ts';
import { impersonationFromEnv } from '../kube/kubevirt-identity.ts';
import { fromEnv } from './env-credentials.ts';
import { jsonLogger, type Logger } from '../metrics/log.ts';
import { MetricsRegistry } from '../metrics/registry.ts';
import { SqsKeyQueue, queueUrlsFromEnv } from '../queue/sqs-queue.ts';
import type { KeyQueue } from '../queue/port.ts';
import { openDynamoDbState } from '../state/dynamodb-state.ts';
import type { StateStore } from '../state/port.ts';
import { cachedClusterConfig, type ClusterConfigRead } from '../config/cluster-config-cache.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import type { CutoverHooks } from '../reconcile/instrument.ts';
import { cutoverEnv } from '../cutover/env.ts';
import { CutoverGate } from '../cutover/gate.ts';
import { LeaseClient } from '../cutover/lease.ts';
import { channelHooks, SHADOW_QUEUE_ENV, SqsShadowChannel } from '../cutover/shadow-channel.ts';

export interface LambdaEnv {
  readonly queue: KeyQueue;
  readonly state: StateStore;
  readonly kube: KubeClient;
  readonly clusterConfig: (read?: ClusterConfigRead) => Promise<ClusterConfig>;
  readonly log: Logger;
  readonly metrics: MetricsRegistry;
  /** The API server's URL (the `host` of KubeVirt's REST client metrics). */
  readonly apiServer?: string;
  /** The cutover's fence and shadow mode when VR_MODE is set (docs/cutover.md). */
  readonly cutover?: CutoverHooks;
}

let env: LambdaEnv | undefined;

/**
 * SDK client settings in Lambda: the region and the role's credentials are what the runtime puts
 * in the environment (`AWS_REGION`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`),
 * so nothing else is consulted (the region from `vars`; credentials always from `process.env`,
 * where the SDK's `fromEnv` reads them). The bundles also replace the SDK's default chain by this same
 * provider (scripts/build.ts `LAMBDA_ALIASES`), which is what keeps the chain out of them.
 */
export function lambdaAwsConfig(vars: NodeJS.ProcessEnv): { region?: string; credentials: AwsCredentialIdentityProvider } {
  return { ...(vars.AWS_REGION ? { region: vars.AWS_REGION } : {}), credentials: fromEnv() };
}

/** The function's environment, built on first use and kept for the life of the container. */
export function lambdaEnv(service: string, vars: NodeJS.ProcessEnv = process.env): LambdaEnv {
  if (env) return env;
  // Throws, naming the variables to set, when neither EKS_* nor KUBE_API_SERVER is configured.
  const connection = connectionFromEnv(vars);
  // The writes virt-api judges by identity go as KubeVirt's controller (shared/kube/kubevirt-identity.ts).
  const kube = createHttpKubeClient(connection, { reportingInstance: vars.AWS_LAMBDA_FUNCTION_NAME ?? service, impersonateKubeVirtController: impersonationFromEnv(vars) });
  const aws = lambdaAwsConfig(vars);
  const sqs = new SQSClient(aws);
  env = {
    queue: new SqsKeyQueue({ client: sqs, prefix: vars.QUEUE_PREFIX ?? 'virt-reconciler', urls: queueUrlsFromEnv(vars) }),
    state: openDynamoDbState({ client: new DynamoDBClient(aws) }),
    kube,
    clusterConfig: cachedClusterConfig(kube),
    log: jsonLogger({ service }),
    metrics: new MetricsRegistry(),
    apiServer: connection.server,
  };
  const cut = cutoverEnv(vars);
  if (cut) {
    const lease = new LeaseClient(kube, { identity: cut.identity, namespace: cut.namespace });
    const gate = new CutoverGate({ identity: cut.identity, shadow: cut.mode === 'shadow', readLease: async () => (await lease.read()).lease });
    const log = env.log;
    const metrics = env.metrics;
    const shadowUrl = vars[SHADOW_QUEUE_ENV];
    if (cut.mode === 'shadow' && !shadowUrl) log.warn(`shadow mode without ${SHADOW_QUEUE_ENV}: decisions are logged, not judged`);
    const channel = cut.mode === 'shadow' && shadowUrl ? new SqsShadowChannel({ client: sqs, url: shadowUrl, log, metrics }) : undefined;
    env = {
      ...env,
      cutover: {
        mode: () => gate.mode(),
        dryRun: createHttpKubeClient(connection, { dryRun: true, reportingInstance: vars.AWS_LAMBDA_FUNCTION_NAME ?? service, impersonateKubeVirtController: impersonationFromEnv(vars) }),
        // Each decision is logged, one line, and sent to the relay, which judges it against its
        // watch and writes divergences to the state table (shared/cutover/shadow-channel.ts).
        ...channelHooks(channel, log, metrics),
      },
    };
  }
  return env;
}
