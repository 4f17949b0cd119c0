/**
 * `virt-reconciler replay`: puts dead-lettered keys back on their controller's queue (cause
 * REPLAY). Safe: a replayed key re-reads current state when it is reconciled, the move is atomic
 * (SQLite) or deduplicated (SQS), and a second replay finds nothing left to move.
 */
import { CliError, intFlag, parseFlags, type Command } from '../command.ts';
import { formatTable, showKey } from '../ops-format.ts';
import { BACKEND_FLAGS, BACKEND_HELP, controllerFlag, keyFlag, withQueueBackend } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler replay (--key ns/name | --all) [--controller C] [--dry-run] [--max N] [--json]
                             [--db FILE | --aws [--prefix NAME]]

Moves dead-lettered keys back onto their queue; each is reconciled again from current state.
Dead letters whose message could not be parsed are skipped (they stay in the DLQ, with why).

  --key ns/name         replay this key
  --all                 replay every dead-lettered key (of --controller, if given)
  --controller C        vmi, vm or migration (default: all)
  --dry-run             report what would move, move nothing
  --max N               move at most N keys
  --json                {"moved": [...], "skipped": [...], "dryRun": bool}
${BACKEND_HELP}`;

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, {
      ...BACKEND_FLAGS,
      controller: { type: 'string' },
      key: { type: 'string' },
      all: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      max: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    // Replaying "everything" by omission would be an easy accident with a full DLQ.
    if (values.key === undefined && values.all !== true) throw new CliError('say what to replay: --key ns/name or --all');
    if (values.key !== undefined && values.all === true) throw new CliError('--key and --all exclude each other');
    const controller = controllerFlag(values.controller);
    const key = keyFlag(values.key, controller);
    const max = values.max === undefined ? undefined : intFlag('max', values.max, 0, 1);
    const dryRun = values['dry-run'] === true;
    return withQueueBackend(values, async (b) => {
      const report = await b.queue.replay({ ...(controller ? { controller } : {}), ...(key ? { key } : {}), ...(max !== undefined ? { max } : {}), dryRun });
      if (values.json) {
        process.stdout.write(JSON.stringify({ ...report, dryRun }, null, 2) + '\n');
        return 0;
      }
      const verb = dryRun ? 'would replay' : 'replayed';
      if (report.moved.length === 0 && report.skipped.length === 0) {
        process.stdout.write(`${b.description}: nothing to replay${key ? ` (no dead letter for ${key})` : ''}\n`);
        return 0;
      }
      process.stdout.write(`${b.description}: ${verb} ${report.moved.length} key(s)${dryRun ? ' (dry run: nothing moved)' : ''}\n`);
      if (report.moved.length > 0) {
        process.stdout.write(formatTable(['CONTROLLER', 'KEY'], report.moved.map((m) => [m.controller, m.key])) + '\n');
      }
      if (report.skipped.length > 0) {
        process.stdout.write(`skipped ${report.skipped.length} (left in the DLQ):\n`);
        process.stdout.write(formatTable(['CONTROLLER', 'KEY', 'WHY'], report.skipped.map((s) => [s.controller, showKey(s.key), s.why])) + '\n');
      }
      return 0;
    });
  },
};
