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
 *   SHADOW_QUEUE_URL, STATE_TABLE_NAME  in shadow mode: the functions' decisions to judge against
 *                                     the watch, and the table the divergences go to (shadow-channel.ts)
 *   SHADOW_WINDOW_SECONDS, SHADOW_LATE_SECONDS  how far apart our decision and the live controller's
 *                                     may be (default 10), how late the live one may show it (default 6× that)
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
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KubeClient } from '../../shared/kube/client.ts';
import { DynamoDbDivergences } from '../../shared/cutover/divergence-store.ts';
import { SHADOW_QUEUE_ENV, ShadowPump } from '../../shared/cutover/shadow-channel.ts';
import { readTarget, ShadowRecorder } from '../../shared/cutover/shadow-recorder.ts';
import { STATE_TABLE_ENV } from '../../shared/state/dynamodb-table.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';

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

/** An optional positive number of seconds from the environment; a wrong value stops the start, naming it. */
function seconds(name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw} is not a positive number of seconds`);
  return n;
}

function port(name: string, fallback: number): number {
  const raw = env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new Error(`${name}=${raw} is not a port number`);
  return n;
}

/**
 * Shadow mode's judge on AWS: the functions' decisions from the shadow queue, the relay's watch,
 * divergences into the state table. Without the queue or the table named, one line says what is
 * missing and the decisions stay logged by the functions only.
 */
function shadowJudge(sqs: SQSClient, kube: KubeClient, metrics: MetricsRegistry): { recorder: ShadowRecorder; start(): void; stop(): Promise<void> } | undefined {
  const url = env[SHADOW_QUEUE_ENV];
  const table = env[STATE_TABLE_ENV];
  if (!url || !table) {
    log.warn(`shadow mode: ${SHADOW_QUEUE_ENV} and ${STATE_TABLE_ENV} must both be set for the relay to judge the functions' decisions; they are only logged`);
    return undefined;
  }
  const window = seconds('SHADOW_WINDOW_SECONDS');
  const late = seconds('SHADOW_LATE_SECONDS');
  const dynamo = new DynamoDBClient({});
  const recorder = new ShadowRecorder({
    sink: new DynamoDbDivergences(dynamo, table),
    read: (t) => readTarget(kube, t),
    metrics,
    ...(window !== undefined ? { windowMs: window * 1000 } : {}),
    ...(late !== undefined ? { lateMs: late * 1000 } : {}),
    onSinkError: (err) => log.warn('shadow: a divergence was not written to the state table; retried', { error: errorText(err) }),
  });
  const pump = new ShadowPump({ client: sqs, url, recorder, log, metrics });
  return {
    recorder,
    start() {
      recorder.start();
      pump.start();
      log.info('shadow: judging the functions\' decisions against the watch', { queue: url, table });
    },
    async stop() {
      await pump.stop();
      await recorder.stop();
      dynamo.destroy();
    },
  };
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
  const metrics = new MetricsRegistry();
  const judge = cut?.mode === 'shadow' ? shadowJudge(client, createKubeClient(cluster.kubeConfig), metrics) : undefined;
  const relay = new Relay({
    metrics,
    kubeConfig: cluster.kubeConfig,
    queue,
    log,
    ...(env.CLUSTER_ID ? { clusterId: env.CLUSTER_ID } : {}),
    ...(lease ? { holdsLease: () => keeper?.writable ?? false } : {}),
    ...(judge ? { observe: judge.recorder.observe.bind(judge.recorder) } : {}),
  });
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
  judge?.start();
  log.info('relay started', { cluster: cluster.description, listen: servers.map((s) => s.url), clusterId: env.CLUSTER_ID ?? '' });

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('stopping: flushing the outbox', { signal, pending: relay.pending });
    // Several relay replicas may renew: none releases the Lease on its own stop (a rollout would
    // hand it to a standby virt-controller); `virt-reconciler handback` does.
    await keeper?.stop();
    await judge?.stop();
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
