/**
 * What `trace` and `diagnose` read: the queue and the state table (embedded SQLite file, or AWS
 * with `--aws`: SQS and the DynamoDB table named by `--table` / STATE_TABLE_NAME) and, for
 * `diagnose` and a trace's children, the cluster (`--kubeconfig`, $KUBECONFIG, ~/.kube/config,
 * else the sandbox kubeconfig `up` leaves next to its database). Both commands only read.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../shared/kube/config.ts';
import { openDynamoDbState, STATE_TABLE_ENV } from '../shared/state/dynamodb-state.ts';
import type { StateStore } from '../shared/state/port.ts';
import { openSqliteState } from '../shared/state/sqlite-state.ts';
import { BadTargetError, parseTarget, type Target, type TargetKind } from '../ops/target.ts';
import { CliError, parseFlags, type Command } from './command.ts';
import { BACKEND_FLAGS, BACKEND_HELP, DEFAULT_DB, openQueueBackend, withBackend, type BackendFlags, type QueueBackend } from './queue-backend.ts';

/** The file `up` writes the sandbox's kubeconfig to, next to its database. */
export const SANDBOX_KUBECONFIG = 'sandbox.kubeconfig';

export const OPS_FLAGS = { ...BACKEND_FLAGS, table: { type: 'string' }, kubeconfig: { type: 'string' } } as const;

export const OPS_HELP = `${BACKEND_HELP}
  --table NAME          with --aws: the state table (default $${STATE_TABLE_ENV})
  --kubeconfig FILE     the cluster (default $KUBECONFIG, ~/.kube/config, else the sandbox of 'up')`;

export interface OpsFlags extends BackendFlags {
  readonly table?: string | undefined;
  readonly kubeconfig?: string | undefined;
}

/** The queue, the table and how to reach the cluster. */
export interface OpsBackend {
  readonly queue: QueueBackend;
  /** For headings and errors: the queue's and the table's place. */
  readonly description: string;
  readonly state: StateStore;
  /** Where the cluster comes from; throws a CliError (exit 1) when there is none. */
  kubeConfig(): KubeConfig;
  close(): Promise<void>;
}

/** Opens what the flags name. Bad flags are CliErrors (exit 2), a missing database exit 1. */
export function openOpsBackend(flags: OpsFlags, env: NodeJS.ProcessEnv = process.env): OpsBackend {
  if (flags.table !== undefined && flags.aws !== true) throw new CliError('--table only applies with --aws');
  const queue = openQueueBackend(flags, env);
  let state: StateStore;
  let client: DynamoDBClient | undefined;
  if (flags.aws === true) {
    const tableName = flags.table ?? env[STATE_TABLE_ENV];
    if (!tableName) {
      void queue.close();
      throw new CliError(`--aws needs the state table: pass --table NAME or set ${STATE_TABLE_ENV}`);
    }
    client = new DynamoDBClient({});
    state = openDynamoDbState({ tableName, client });
  } else {
    state = openSqliteState({ path: resolve(flags.db ?? DEFAULT_DB) });
  }
  return {
    queue,
    description: flags.aws === true ? `${queue.description}, table ${flags.table ?? env[STATE_TABLE_ENV]}` : queue.description,
    state,
    kubeConfig: () => clusterConfig(flags, env),
    async close() {
      await state.close();
      client?.destroy();
      await queue.close();
    },
  };
}

/** The cluster the flags name: --kubeconfig, $KUBECONFIG, ~/.kube/config, else the sandbox of `up` beside the database. */
export function clusterConfig(flags: Pick<OpsFlags, 'kubeconfig' | 'db' | 'aws'>, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const sandbox = join(dirname(resolve(flags.db ?? DEFAULT_DB)), SANDBOX_KUBECONFIG);
  const home = join(env.HOME ?? '', '.kube', 'config');
  // The sandbox of a local `up` is the cluster only when nothing else is configured, as in `up`.
  const file = flags.kubeconfig ?? (env.KUBECONFIG || existsSync(home) || flags.aws ? undefined : existsSync(sandbox) ? sandbox : undefined);
  try {
    return loadKubeConfig({ ...(file ? { file } : {}), env }).kubeConfig;
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err), 1);
  }
}

/** Runs `body` with the backend the flags name (see withBackend: backend failures are exit 1). */
export function withOpsBackend(flags: OpsFlags, body: (b: OpsBackend) => Promise<number>): Promise<number> {
  return withBackend(() => openOpsBackend(flags), body);
}

/** The one positional argument `trace` and `diagnose` take: `<kind>/<ns>/<name>` (bad input: exit 2). */
export function targetArgument<K extends TargetKind>(positionals: readonly string[], kinds: readonly K[]): Target & { readonly kind: K } {
  if (positionals.length > 1) throw new CliError(`unexpected argument '${positionals[1]}'`);
  try {
    return parseTarget(positionals[0], kinds);
  } catch (err) {
    if (err instanceof BadTargetError) throw new CliError(err.message);
    throw err;
  }
}

/**
 * A `<command> <kind>/<ns>/<name> [--json] [backend flags]` command (`trace`, `diagnose`): parses
 * the flags and the target, prints `help` for --help, and runs `body` with the open backend.
 */
export function targetCommand<K extends TargetKind>(help: string, kinds: readonly K[], body: (target: Target & { readonly kind: K }, opts: { json: boolean }, b: OpsBackend) => Promise<number>): Command {
  return {
    async run(argv) {
      const { values, positionals } = parseFlags(argv, { ...OPS_FLAGS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, true);
      if (values.help) {
        process.stdout.write(help + '\n');
        return 0;
      }
      const target = targetArgument(positionals, kinds);
      return withOpsBackend(values, (b) => body(target, { json: values.json === true }, b));
    },
  };
}
