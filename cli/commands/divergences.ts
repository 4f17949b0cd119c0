/**
 * `virt-reconciler divergences`: what shadow mode would have written that the live virt-controller
 * did not (docs/cutover.md), by key, with the differing fields; read from the database of
 * `up --shadow`. Exit 0 when there are none, 1 when there are.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteDivergences, type StoredDivergence } from '../../shared/cutover/divergence-store.ts';
import { CliError, parseFlags, type Command } from '../command.ts';
import { controllerFlag, DEFAULT_DB } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler divergences [flags]

Shadow mode's divergences: writes we would have made that the live virt-controller did not, by key,
with the fields that differ. Exit 0 when there are none, 1 when there are.

  --db FILE             the database of 'up --shadow' (default ${DEFAULT_DB})
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
  async run(argv) {
    const { values } = parseFlags(argv, { db: { type: 'string' }, controller: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const controller = controllerFlag(values.controller);
    const file = resolve(values.db ?? DEFAULT_DB);
    if (!existsSync(file)) throw new CliError(`no database at ${file}: run 'virt-reconciler up --shadow' first, or pass --db`, 1);
    const db = new DatabaseSync(file);
    try {
      const list = new SqliteDivergences(db).list({ controller });
      process.stdout.write(values.json ? JSON.stringify(list, null, 2) + '\n' : formatDivergences(list));
      return list.length === 0 ? 0 : 1;
    } finally {
      db.close();
    }
  },
};
