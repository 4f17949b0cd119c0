/**
 * `virt-reconciler divergences`: what shadow mode would have written that the live virt-controller
 * did not (docs/cutover.md), by key, with the differing fields; read from the database of
 * `up --shadow`, or with `--aws` from the state table the AWS relay writes them to. Exit 0 when
 * there are none, 1 when there are.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbDivergences, SqliteDivergences, type StoredDivergence } from '../../shared/cutover/divergence-store.ts';
import { STATE_TABLE_ENV } from '../../shared/state/dynamodb-table.ts';
import { CliError, parseFlags, type Command } from '../command.ts';
import { controllerFlag, DEFAULT_DB } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler divergences [flags]

Shadow mode's divergences: writes we would have made that the live virt-controller did not, by key,
with the fields that differ. Exit 0 when there are none, 1 when there are.

  --db FILE             the database of 'up --shadow' (default ${DEFAULT_DB})
  --aws                 the AWS deployment's instead: its state table, where the relay writes them
  --table NAME          with --aws: the state table (default $${STATE_TABLE_ENV})
  --controller C        one controller's
  --json                as JSON`;

const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));

export function formatDivergences(list: readonly StoredDivergence[]): string {
  if (list.length === 0) return 'no divergences\n';
  const lines: string[] = [];
  let key = '';
  for (const d of [...list].sort((a, b) => (a.controller + a.key).localeCompare(b.controller + b.key))) {
    if (`${d.controller} ${d.key}` !== key) {
      key = `${d.controller} ${d.key}`;
      lines.push(`${d.controller} ${d.key}`);
    }
    lines.push(`  ${d.write} ${d.object} (×${d.count}, first ${new Date(d.at).toISOString()})`);
    for (const f of d.fields) lines.push(`    ${f.path}: ours ${show(f.ours)}, live ${show(f.live)}`);
  }
  return `${lines.join('\n')}\n${list.length} divergences\n`;
}

export const command: Command = {
  async run(argv, env: NodeJS.ProcessEnv = process.env) {
    const { values } = parseFlags(argv, { db: { type: 'string' }, aws: { type: 'boolean' }, table: { type: 'string' }, controller: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    if (values.table !== undefined && values.aws !== true) throw new CliError('--table only applies with --aws');
    const controller = controllerFlag(values.controller);
    const list = values.aws ? await fromTable(values, env, controller) : fromDatabase(values.db, controller);
    process.stdout.write(values.json ? JSON.stringify(list, null, 2) + '\n' : formatDivergences(list));
    return list.length === 0 ? 0 : 1;
  },
};

function fromDatabase(db: string | undefined, controller: string | undefined): StoredDivergence[] {
  const file = resolve(db ?? DEFAULT_DB);
  if (!existsSync(file)) throw new CliError(`no database at ${file}: run 'virt-reconciler up --shadow' first, or pass --db (--aws for an AWS deployment)`, 1);
  const handle = new DatabaseSync(file);
  try {
    return new SqliteDivergences(handle).list({ controller });
  } finally {
    handle.close();
  }
}

async function fromTable(values: { db?: string | undefined; table?: string | undefined }, env: NodeJS.ProcessEnv, controller: string | undefined): Promise<StoredDivergence[]> {
  if (values.db !== undefined) throw new CliError('--db and --aws name different stores: pass one');
  const table = values.table ?? env[STATE_TABLE_ENV];
  if (!table) throw new CliError(`--aws needs the state table: pass --table NAME or set ${STATE_TABLE_ENV}`);
  const client = new DynamoDBClient({});
  try {
    return await new DynamoDbDivergences(client, table).list({ controller });
  } catch (err) {
    throw new CliError(`could not read divergences from table ${table}: ${err instanceof Error ? err.message : String(err)}`, 1);
  } finally {
    client.destroy();
  }
}
