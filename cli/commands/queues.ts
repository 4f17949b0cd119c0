/**
 * `virt-reconciler queues`: the depth of every controller's queue — visible, in flight, delayed,
 * dead-lettered, age of the oldest key — from the embedded queue or from SQS.
 */
import { CONTROLLERS } from '../../shared/queue/message.ts';
import type { QueueDepth } from '../../shared/queue/port.ts';
import { parseFlags, type Command } from '../command.ts';
import { formatAge, formatTable } from '../ops-format.ts';
import { BACKEND_FLAGS, BACKEND_HELP, withQueueBackend, type QueueBackend } from '../queue-backend.ts';

const HELP = `usage: virt-reconciler queues [--watch] [--json] [--db FILE | --aws [--prefix NAME]]

Depth of each controller's key queue:
  VISIBLE        keys ready to be reconciled now
  IN FLIGHT      keys a worker holds (on SQS: also keys waiting out a retry backoff)
  DELAYED        keys waiting on a retry backoff or a requeue-after timer
  DEAD-LETTERED  keys in the DLQ (see 'virt-reconciler dlq list')
  OLDEST         age of the oldest visible or in-flight key ('-' on SQS: use CloudWatch's
                 ApproximateAgeOfOldestMessage)

  --watch               refresh every 2 s until Ctrl-C
  --json                one JSON document (with --watch: one per line)
${BACKEND_HELP}`;

const REFRESH_MS = 2000;

/** Depth of every controller, in CONTROLLERS order. */
async function depths(b: QueueBackend): Promise<QueueDepth[]> {
  return Promise.all(CONTROLLERS.map((c) => b.queue.depth(c)));
}

function render(b: QueueBackend, all: readonly QueueDepth[], at: Date): string {
  const rows = all.map((d) => [
    d.controller,
    String(d.visible),
    String(d.inFlight),
    String(d.delayed),
    String(d.deadLettered),
    b.ageOfOldestKnown ? formatAge(d.oldestAgeSeconds) : '-',
  ]);
  const table = formatTable(['CONTROLLER', 'VISIBLE', 'IN FLIGHT', 'DELAYED', 'DEAD-LETTERED', 'OLDEST'], rows);
  return `${b.description} at ${at.toISOString()}\n${table}\n`;
}

function toJson(b: QueueBackend, all: readonly QueueDepth[], at: Date): string {
  return JSON.stringify({
    backend: b.kind,
    at: at.toISOString(),
    queues: all.map((d) => ({ ...d, oldestAgeSeconds: b.ageOfOldestKnown ? d.oldestAgeSeconds : null })),
  });
}

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { ...BACKEND_FLAGS, watch: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    return withQueueBackend(values, async (b) => {
      const show = async (): Promise<void> => {
        const at = new Date();
        const all = await depths(b);
        if (values.json) process.stdout.write(toJson(b, all, at) + '\n');
        // On a terminal, redraw in place (clear screen, cursor home); piped, append each table.
        else process.stdout.write((process.stdout.isTTY && values.watch ? '\x1b[2J\x1b[H' : '') + render(b, all, at) + (values.watch ? '\n' : ''));
      };
      await show();
      if (!values.watch) return 0;
      await new Promise<void>((done) => {
        let timer: NodeJS.Timeout | undefined;
        let stopped = false;
        const stop = (): void => {
          stopped = true;
          clearTimeout(timer);
          done();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        const tick = (): void => {
          if (stopped) return;
          timer = setTimeout(() => {
            show().then(tick, (err: unknown) => {
              // A transient failure (database busy, SQS throttling) should not end the watch.
              process.stderr.write(`queues: ${err instanceof Error ? err.message : String(err)}\n`);
              tick();
            });
          }, REFRESH_MS);
        };
        tick();
      });
      return 0;
    });
  },
};
