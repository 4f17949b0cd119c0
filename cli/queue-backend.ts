/**
 * Which key queue the operations commands (`queues`, `dlq`, `replay`) talk to: the embedded
 * SQLite file that `up` writes (`--db FILE`, the default) or the AWS queues (`--aws`, SQS with the
 * URLs from QUEUE_URL_* / DLQ_URL_* / TIMER_QUEUE_URL_* or looked up by `--prefix`, region and
 * endpoint from the usual AWS environment). Same commands, same output, either way.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { controllerInfo, isController } from '../shared/controllers.ts';
import { CONTROLLERS, isKey, type Controller } from '../shared/queue/message.ts';
import type { KeyQueue } from '../shared/queue/port.ts';
import { SqliteKeyQueue } from '../shared/queue/sqlite-queue.ts';
import { queueUrlsFromEnv, SqsKeyQueue } from '../shared/queue/sqs-queue.ts';
import { CliError } from './command.ts';

/** Where `up` keeps its queue and table (`--data-dir` default `.data`). */
export const DEFAULT_DB = '.data/virt-reconciler.db';
/** The AWS stack's default name prefix (infra/aws/settings.ts). */
export const DEFAULT_PREFIX = 'virt-reconciler';

/** The flags every operations command accepts, for `parseFlags`. */
export const BACKEND_FLAGS = {
  db: { type: 'string' },
  aws: { type: 'boolean' },
  prefix: { type: 'string' },
} as const;

export const BACKEND_HELP = `  --db FILE             the embedded queue that 'up' writes (default ${DEFAULT_DB})
  --aws                 the SQS queues instead: QUEUE_URL_<C>/DLQ_URL_<C>/TIMER_QUEUE_URL_<C> if set, else
                        looked up by name; AWS_REGION, AWS_ENDPOINT_URL_SQS and credentials as usual
  --prefix NAME         with --aws: queue name prefix (default $QUEUE_PREFIX or ${DEFAULT_PREFIX})`;

export interface BackendFlags {
  readonly db?: string | undefined;
  readonly aws?: boolean | undefined;
  readonly prefix?: string | undefined;
}

/** An open queue plus what the commands need to know about where it lives. */
export interface QueueBackend {
  readonly queue: KeyQueue;
  readonly kind: 'sqlite' | 'sqs';
  /** For headings: the file, or the prefix and region. */
  readonly description: string;
  /**
   * Whether `oldestAgeSeconds` means anything. SQS has no such queue attribute (it is a
   * CloudWatch metric), and a CLI holds no message, so on AWS the age is unknown.
   */
  readonly ageOfOldestKnown: boolean;
  close(): Promise<void>;
}

/** Opens the queue the flags name. Throws {@link CliError}: 2 for bad flags, 1 for a missing file. */
export function openQueueBackend(flags: BackendFlags, env: NodeJS.ProcessEnv = process.env): QueueBackend {
  if (flags.aws === true) {
    if (flags.db !== undefined) throw new CliError('--db and --aws name two different queues: pass one');
    const prefix = flags.prefix ?? env.QUEUE_PREFIX ?? DEFAULT_PREFIX;
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(prefix)) throw new CliError(`--prefix: letters, digits, - and _ only (≤ 40), got '${prefix}'`);
    const endpoint = env.AWS_ENDPOINT_URL_SQS ?? env.AWS_ENDPOINT_URL;
    // With a custom endpoint (a local emulator) the queue URLs' hosts are not to be trusted as
    // endpoints; the SDK otherwise sends each call to the host in the queue URL.
    const client = new SQSClient(endpoint ? { endpoint, useQueueUrlAsEndpoint: false } : {});
    const queue = new SqsKeyQueue({ client, prefix, urls: queueUrlsFromEnv(env) });
    return {
      queue,
      kind: 'sqs',
      description: `SQS, prefix ${prefix}${env.AWS_REGION ? `, ${env.AWS_REGION}` : ''}${endpoint ? `, endpoint ${endpoint}` : ''}`,
      ageOfOldestKnown: false,
      async close() {
        await queue.close();
        client.destroy();
      },
    };
  }
  if (flags.prefix !== undefined) throw new CliError('--prefix only applies with --aws');
  const file = resolve(flags.db ?? DEFAULT_DB);
  // Never create an empty database by accident: a typo would otherwise show "all queues empty".
  if (!existsSync(file)) {
    throw new CliError(`no queue database at ${file} (start 'virt-reconciler up' first, or pass --db FILE or --aws)`, 1);
  }
  const queue = new SqliteKeyQueue({ db: file });
  return { queue, kind: 'sqlite', description: `SQLite ${file}`, ageOfOldestKnown: true, close: () => queue.close() };
}

/** Validates `--controller`: one of the controllers, or undefined for all. */
export function controllerFlag(value: string | undefined): Controller | undefined {
  if (value === undefined) return undefined;
  if (!isController(value)) throw new CliError(`--controller must be one of ${CONTROLLERS.join(', ')}, got '${value}'`);
  return value;
}

/**
 * Validates `--key`: `namespace/name`, or a bare `name` for a controller of cluster-scoped
 * objects; with `--controller`, the form that controller's keys have (shared/controllers.ts).
 */
export function keyFlag(value: string | undefined, controller?: Controller): string | undefined {
  if (value === undefined) return undefined;
  const scope = controller === undefined ? undefined : controllerInfo(controller).keyScope;
  if (!isKey(value, scope)) {
    const form = scope === 'cluster' ? 'a name' : scope === 'namespaced' ? 'namespace/name' : 'namespace/name, or a name for cluster-scoped keys';
    throw new CliError(`--key must be ${form} (lower-case DNS names), got '${value}'`);
  }
  return value;
}

/**
 * Runs `body` with what `open` opens and closes it afterwards. A failure of the backend itself
 * (SQS unreachable, queue missing, database locked, cluster unreachable) is one line naming it and
 * exit 1, not a stack trace.
 */
export async function withBackend<B extends { readonly description: string; close(): Promise<void> }>(open: () => B, body: (b: B) => Promise<number>): Promise<number> {
  const backend = open();
  try {
    return await body(backend);
  } catch (err) {
    if (err instanceof CliError) throw err;
    const name = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : '';
    throw new CliError(`${backend.description}: ${name}${err instanceof Error ? err.message : String(err)}`, 1);
  } finally {
    await backend.close();
  }
}

/** {@link withBackend} over the queue the flags name. */
export function withQueueBackend(flags: BackendFlags, body: (b: QueueBackend) => Promise<number>): Promise<number> {
  return withBackend(() => openQueueBackend(flags), body);
}
