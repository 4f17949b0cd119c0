/**
 * fauxqs in process, bound to 127.0.0.1. `startFauxqs()` (2.4.1) hard-codes `0.0.0.0`, so we use
 * its exported `buildApp()` and listen ourselves. Queue URLs then carry the request's host
 * (127.0.0.1:port), which the SDK never needs to resolve: the client has an explicit endpoint
 * and `useQueueUrlAsEndpoint: false`.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
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
