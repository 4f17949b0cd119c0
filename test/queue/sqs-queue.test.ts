import { after, before } from 'node:test';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { queueConformance, type HarnessOptions, type QueueHarness } from './conformance.ts';
import { startLocalSqs, type LocalSqs } from './fauxqs.ts';

let sqs: LocalSqs;
before(async () => {
  sqs = await startLocalSqs();
});
after(() => sqs.stop());
let n = 0;

/** Fresh queues per test (unique prefix); time is real, so `advance` waits and runs the forwarder. */
async function harness(opts: HarnessOptions): Promise<QueueHarness> {
  const prefix = `t${n++}-${process.pid}`;
  const open = () =>
    new SqsKeyQueue({
      client: sqs.client(),
      prefix,
      ...(opts.retry ? { retry: opts.retry } : {}),
      ...(opts.visibilityTimeoutMs ? { visibilityTimeoutSeconds: Math.ceil(opts.visibilityTimeoutMs / 1000) } : {}),
    });
  let queue = open();
  await queue.ensureQueues();
  return {
    get queue() {
      return queue;
    },
    sendRaw: (controller, body) => queue.sendRaw(controller, body),
    advance: async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      await queue.pumpTimers();
    },
    // A restarted process: a new client on the same queues, knowing nothing of the old receipts.
    reopen: async () => {
      await queue.close();
      queue = open();
      return queue;
    },
    caps: { coalescesWaiting: false, ageOfVisible: false },
    close: () => queue.close(),
  };
}

queueConformance('sqs (fauxqs)', harness);
