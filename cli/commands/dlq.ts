/**
 * `virt-reconciler dlq list`: the dead-lettered keys, with why they were dead-lettered, how many
 * attempts they had, and when they first and last failed.
 */
import { CliError, parseFlags, type Command } from '../command.ts';
import { formatTable, formatTime, showKey } from '../ops-format.ts';
import { BACKEND_FLAGS, BACKEND_HELP, controllerFlag, keyFlag, withQueueBackend } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler dlq list [--controller C] [--key ns/name] [--json] [--db FILE | --aws [--prefix NAME]]

Lists dead-lettered keys: controller, key, reason, attempts, first and last failure (UTC), message.
A key is dead-lettered after its retries run out, on a permanent error, or when its message
could not be parsed ('(malformed)': such entries cannot be replayed). Put keys back with
'virt-reconciler replay'.

  --controller C        vmi, vm or migration (default: all)
  --key ns/name         only this key
  --json                a JSON array instead of the table (times in epoch ms)
${BACKEND_HELP}`;

/** How much of the failure message fits on a table row. */
const MESSAGE_WIDTH = 80;

export const command: Command = {
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { ...BACKEND_FLAGS, controller: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      true,
    );
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const [sub, ...extra] = positionals;
    if (sub !== 'list') throw new CliError(sub === undefined ? "missing subcommand: 'dlq list'" : `unknown subcommand '${sub}' (only 'list'; to put keys back: 'virt-reconciler replay')`);
    if (extra.length > 0) throw new CliError(`unexpected argument '${extra[0]}'`);
    const controller = controllerFlag(values.controller);
    const key = keyFlag(values.key, controller);
    return withQueueBackend(values, async (b) => {
      const letters = await b.queue.listDeadLetters({ ...(controller ? { controller } : {}), ...(key ? { key } : {}) });
      if (values.json) {
        process.stdout.write(JSON.stringify(letters, null, 2) + '\n');
        return 0;
      }
      if (letters.length === 0) {
        process.stdout.write(`${b.description}: no dead-lettered keys\n`);
        return 0;
      }
      const rows = letters.map((d) => [
        d.controller,
        showKey(d.key),
        d.reason,
        String(d.attempts),
        formatTime(d.firstFailureAt),
        formatTime(d.lastFailureAt),
        d.message.length > MESSAGE_WIDTH ? d.message.slice(0, MESSAGE_WIDTH - 1) + '…' : d.message,
      ]);
      process.stdout.write(`${b.description}: ${letters.length} dead-lettered\n`);
      process.stdout.write(formatTable(['CONTROLLER', 'KEY', 'REASON', 'ATTEMPTS', 'FIRST FAILURE', 'LAST FAILURE', 'MESSAGE'], rows) + '\n');
      return 0;
    });
  },
};
