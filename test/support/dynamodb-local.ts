/**
 * One DynamoDB Local per test file: started on a free loopback port in `before()`, stopped in
 * `after()`. `npm test` installs the emulator before the first file runs
 * (scripts/test-prerequisites.ts); when Java or the emulator is missing all the same, starting
 * throws with the fix, so every DynamoDB test FAILS rather than skipping silently.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { missingPrerequisite, startProcess } from '../../scripts/dynamodb-local.ts';

export interface DynamoDbLocal {
  readonly endpoint: string;
  /** A new client for this emulator (several clients = several connection pools). */
  client(): DynamoDBClient;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}

/** Starts DynamoDB Local and resolves once it answers ListTables (or rejects, saying why). */
export async function startDynamoDbLocal(timeoutMs = 60_000): Promise<DynamoDbLocal> {
  const missing = missingPrerequisite();
  if (missing) throw new Error(missing);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = startProcess(port, 'pipe');
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  // Should the test process end without after() (an uncaught error, process.exit), take the
  // emulator down with it rather than leave a 230 MB JVM behind.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.on('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
  });

  const client = (): DynamoDBClient =>
    new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  const stop = async (): Promise<void> => {
    if (exited) return;
    const done = once(child, 'exit');
    child.kill('SIGTERM');
    await done;
  };

  const probe = client();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited before answering on ${endpoint}:\n${output}`);
      try {
        await probe.send(new ListTablesCommand({}));
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    probe.destroy();
  }
  return { endpoint, client, stop };
}
