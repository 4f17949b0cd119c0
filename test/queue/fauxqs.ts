/**
 * fauxqs in process, bound to 127.0.0.1. `startFauxqs()` (2.4.1) hard-codes `0.0.0.0`, so we use
 * its exported `buildApp()` and listen ourselves. Queue URLs then carry the request's host
 * (127.0.0.1:port), which the SDK never needs to resolve: the client has an explicit endpoint
 * and `useQueueUrlAsEndpoint: false`.
 */
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CONTROLLERS } from '../../shared/controllers.ts';
import { queueNames } from '../../shared/queue/sqs-queue.ts';
import { buildApp } from 'fauxqs';

export interface LocalSqs {
  readonly endpoint: string;
  client(): SQSClient;
  stop(): Promise<void>;
}

export async function startLocalSqs(): Promise<LocalSqs> {
  const app = buildApp({ logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('fauxqs did not bind a TCP port');
  const endpoint = `http://127.0.0.1:${addr.port}`;
  const clients: SQSClient[] = [];
  return {
    endpoint,
    client() {
      const c = new SQSClient({
        endpoint,
        region: 'us-east-1',
        useQueueUrlAsEndpoint: false,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.destroy();
      await app.close();
    },
  };
}

/**
 * QUEUE_URL_<FN>, DLQ_URL_<FN> and TIMER_QUEUE_URL_<FN> of every controller, as the CDK stack
 * sets them, for queues `prefix` already made. fauxqs names its queues
 * http://sqs.<region>.localhost:<port>/…, which does not resolve here, and a bundle's SDK uses the
 * queue URL as its endpoint: so these are loopback URLs.
 */
export async function queueUrlEnv(sqs: LocalSqs, prefix: string): Promise<Record<string, string>> {
  const client = sqs.client();
  const urlOf = async (QueueName: string): Promise<string> => {
    const url = new URL((await client.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl ?? '');
    return new URL(url.pathname, sqs.endpoint).href;
  };
  const env: Record<string, string> = {};
  for (const c of CONTROLLERS) {
    const names = queueNames(prefix, c);
    const u = c.toUpperCase();
    Object.assign(env, { [`QUEUE_URL_${u}`]: await urlOf(names.queue), [`DLQ_URL_${u}`]: await urlOf(names.dlq), [`TIMER_QUEUE_URL_${u}`]: await urlOf(names.timers) });
  }
  return env;
}
