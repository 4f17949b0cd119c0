/**
 * One Lambda instance for the function footprint benchmark (function-footprint.bench.ts), in a
 * process of its own: it imports a built bundle (BUNDLE_URL), configured by environment only as
 * Lambda configures it, then runs `handler(event)` for each event the parent sends over IPC, one
 * at a time — as a Lambda instance runs one invocation at a time — and answers each with the
 * invocation's wall time, its CPU time (this process does nothing else meanwhile, so the
 * process's CPU delta is the invocation's) and the process's memory after it.
 */
import { performance } from 'node:perf_hooks';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

export interface InstanceReady {
  readonly kind: 'ready';
  readonly importMs: number;
  readonly rssBytes: number;
}

export interface InvocationFigures {
  readonly kind: 'invoked';
  readonly id: number;
  readonly response: SQSBatchResponse;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** The process's peak resident memory so far (getrusage). */
  readonly maxRssBytes: number;
}

export interface InvokeRequest {
  readonly id: number;
  readonly event: SQSEvent;
}

async function main(): Promise<void> {
  const url = process.env.BUNDLE_URL;
  if (!url || !process.send) throw new Error('function-instance: run me with fork() and BUNDLE_URL set');
  const t0 = performance.now();
  const { handler } = (await import(url)) as { handler: (e: SQSEvent, c: { getRemainingTimeInMillis(): number }) => Promise<SQSBatchResponse> };
  // As Lambda's context: the stack's 60 s function timeout from the invocation's start.
  const timeoutMs = Number(process.env.FUNCTION_TIMEOUT_MS ?? 60_000);
  process.send({ kind: 'ready', importMs: performance.now() - t0, rssBytes: process.memoryUsage.rss() } satisfies InstanceReady);
  let queue = Promise.resolve();
  process.on('message', (req: InvokeRequest) => {
    queue = queue.then(async () => {
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      const response = await handler(req.event, { getRemainingTimeInMillis: () => timeoutMs - (performance.now() - start) });
      const wallMs = performance.now() - start;
      const cpu = process.cpuUsage(cpu0);
      const mem = process.memoryUsage();
      process.send!({ kind: 'invoked', id: req.id, response, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, maxRssBytes: process.resourceUsage().maxRSS * 1024 } satisfies InvocationFigures);
    });
  });
  // Exit once its log lines are out: a pipe is written asynchronously, and exit would drop the rest.
  process.on('disconnect', () => process.stdout.write('', () => process.stderr.write('', () => process.exit(0))));
}

await main();
