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
 *   VR_MODE, VR_LEASE_IDENTITY, KUBEVIRT_NAMESPACE  the cutover (shared/cutover/env.ts, docs/cutover.md):
 *                                     the relay holds and renews virt-controller's Lease
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
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { cutoverEnv } from '../../shared/cutover/env.ts';
import { LeaseKeeper } from '../../shared/cutover/keeper.ts';
import { LeaseClient } from '../../shared/cutover/lease.ts';

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
  const cut = cutoverEnv(env);
  const lease = cut ? new LeaseClient(createKubeClient(cluster.kubeConfig), { identity: cut.identity, namespace: cut.namespace }) : undefined;
  let keeper: LeaseKeeper | undefined;
  const relay = new Relay({ kubeConfig: cluster.kubeConfig, queue, log, ...(env.CLUSTER_ID ? { clusterId: env.CLUSTER_ID } : {}), ...(lease ? { holdsLease: () => keeper?.writable ?? false } : {}) });
  if (cut && lease) {
    keeper = new LeaseKeeper({ lease, log, onWritable: () => relay.resync() });
    if (cut.mode === 'normal') {
      // As `up`: the Lease when it is free; beside a live virt-controller, one line and no writes
      // (the functions are fenced) until `virt-reconciler takeover`.
      const r = await lease.acquire().catch((err: unknown) => ({ acquired: false as const, holder: `(unreadable: ${errorText(err)})`, renewedAt: undefined }));
      if (!r.acquired) log.error(`virt-controller's Lease is held by ${r.holder}: a live virt-controller runs here; the functions write nothing. Deploy with mode shadow beside it, then run 'virt-reconciler takeover' (docs/cutover.md)`, { namespace: lease.namespace });
    }
    keeper.start();
  }
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
    // Several relay replicas may renew: none releases the Lease on its own stop (a rollout would
    // hand it to a standby virt-controller); `virt-reconciler handback` does.
    await keeper?.stop();
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
