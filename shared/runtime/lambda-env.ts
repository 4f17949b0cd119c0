/**
 * What every Lambda function builds once per cold start from its environment (the CDK stack sets
 * it, docs/deploy-aws.md): the SQS key queue, the DynamoDB state table, the Kubernetes client
 * (EKS IAM auth, or a kubeconfig for testing), a JSON logger and the metrics registry.
 * Module-level state is limited to these SDK clients (STYLE.md §5).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadKubeConfig } from '../kube/config.ts';
import { createKubeClient } from '../kube/client-node.ts';
import type { KubeClient } from '../kube/client.ts';
import { eksKubeConfigFromEnv } from '../kube/eks-token.ts';
import { jsonLogger, type Logger } from '../metrics/log.ts';
import { MetricsRegistry } from '../metrics/registry.ts';
import { SqsKeyQueue, queueUrlsFromEnv } from '../queue/sqs-queue.ts';
import type { KeyQueue } from '../queue/port.ts';
import { openDynamoDbState } from '../state/dynamodb-state.ts';
import type { StateStore } from '../state/port.ts';
import { cachedClusterConfig } from '../reconcile/cluster-config-cache.ts';
import type { ClusterConfig } from '../template/cluster-config.ts';

export interface LambdaEnv {
  readonly queue: KeyQueue;
  readonly state: StateStore;
  readonly kube: KubeClient;
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly log: Logger;
  readonly metrics: MetricsRegistry;
}

let env: LambdaEnv | undefined;

/** The function's environment, built on first use and kept for the life of the container. */
export function lambdaEnv(service: string, vars: NodeJS.ProcessEnv = process.env): LambdaEnv {
  if (env) return env;
  const kubeConfig = eksKubeConfigFromEnv(vars) ?? loadKubeConfig({ env: vars }).kubeConfig;
  const kube = createKubeClient(kubeConfig, { reportingInstance: vars.AWS_LAMBDA_FUNCTION_NAME ?? service });
  env = {
    queue: new SqsKeyQueue({ client: new SQSClient({}), prefix: vars.QUEUE_PREFIX ?? 'virt-reconciler', urls: queueUrlsFromEnv(vars) }),
    state: openDynamoDbState(),
    kube,
    clusterConfig: cachedClusterConfig(kube),
    log: jsonLogger({ service }),
    metrics: new MetricsRegistry(),
  };
  return env;
}
