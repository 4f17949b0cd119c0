/**
 * The relay container's entry (bundled by scripts/build.ts as `dist/relay/index.mjs`): the
 * cluster from loadKubeConfig (in-cluster in production), keys to the SQS FIFO queues, probes and
 * metrics over HTTP, SIGTERM → stop watching, flush the outbox, exit 0.
 *
 * Environment:
 *   QUEUE_URL_VMI / _VM / _MIGRATION  the controllers' FIFO queues (infra/aws stack outputs); the
 *                                     relay only sends, so the DLQ and timer URLs are optional
 *   QUEUE_PREFIX                      queue names to look up when a URL is missing (default virt-reconciler)
 *   CLUSTER_ID                        key prefix when one deployment serves several clusters
 *   HOST                              listen address (default 0.0.0.0 in a pod, else 127.0.0.1)
 *   PORT                              /healthz, /readyz, /metrics (default 8080)
 *   METRICS_PORT                      the same endpoints again for Prometheus (default 9090; = PORT for one listener)
 *   KUBECONFIG, AWS_REGION, AWS_ENDPOINT_URL_SQS …  read by the libraries as usual
 * The local runtime (`virt-reconciler up`) embeds the same Relay; this entry is only the Deployment's.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadKubeConfig } from '../../shared/kube/config.ts';
import { jsonLogger } from '../../shared/metrics/log.ts';
import { CONTROLLERS, type Controller } from '../../shared/queue/message.ts';
import { queueUrlsFromEnv, SqsKeyQueue, type SqsQueueUrls } from '../../shared/queue/sqs-queue.ts';
import { Relay } from './relay.ts';
import { startRelayServer, type RelayServer } from './server.ts';
import { errorText } from '../../shared/errors.ts';

const env = process.env;
const log = jsonLogger({ component: 'relay' });

/** Full URL sets from the env, plus queue-only ones: sending needs nothing else. */
function sendUrls(): Partial<Record<Controller, SqsQueueUrls>> {
  const urls = queueUrlsFromEnv(env);
  for (const c of CONTROLLERS) {
    const queue = env[`QUEUE_URL_${c.toUpperCase()}`];
    if (urls[c] === undefined && queue) urls[c] = { queue, dlq: '', timers: '' };
  }
  return urls;
}

function port(name: string, fallback: number): number {
  const raw = env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new Error(`${name}=${raw} is not a port number`);
  return n;
}

async function main(): Promise<void> {
  const cluster = loadKubeConfig();
  // An explicit endpoint (a local SQS) must win over the host in the queue URLs, which such
  // servers often spell with a name that does not resolve; on AWS neither is set.
  const client = new SQSClient(env.AWS_ENDPOINT_URL_SQS ? { useQueueUrlAsEndpoint: false } : {});
  const queue = new SqsKeyQueue({ client, prefix: env.QUEUE_PREFIX || 'virt-reconciler', urls: sendUrls() });
  const relay = new Relay({ kubeConfig: cluster.kubeConfig, queue, log, ...(env.CLUSTER_ID ? { clusterId: env.CLUSTER_ID } : {}) });
  const host = env.HOST || (env.KUBERNETES_SERVICE_HOST ? '0.0.0.0' : '127.0.0.1');
  const ports = [...new Set([port('PORT', 8080), port('METRICS_PORT', 9090)])];
  const servers: RelayServer[] = [];
  for (const p of ports) servers.push(await startRelayServer({ relay, host, port: p }));
  relay.start();
  log.info('relay started', { cluster: cluster.description, listen: servers.map((s) => s.url), clusterId: env.CLUSTER_ID ?? '' });

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: flushing the outbox', { signal, pending: relay.pending });
    await relay.stop();
    await Promise.all(servers.map((s) => s.close()));
    await queue.close();
    log.info('relay stopped', { signal });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  log.error('relay failed to start', { error: errorText(err) });
  process.exit(1);
});
