/**
 * Key queue benchmark (never a test): keys/s through each implementation with 4 concurrent
 * consumers while a producer sends in batches of 10, and p50/p99 of send → receive.
 * Convention (scripts/bench.ts): a bench file exports `run(): Promise<Record<string, unknown>>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { KeyQueue } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { keyMessage } from '../queue/conformance.ts';
import { startLocalSqs } from '../queue/fauxqs.ts';
import { percentile } from './support/stats.ts';

interface Figures {
  keys: number;
  /** The process's CPU per key, send → receive → ack (ms). */
  cpuMsPerKey: number;
  seconds: number;
  keysPerSecond: number;
  /** send → receive while the producer outruns the consumers (includes queueing). */
  loadedP50Ms: number;
  loadedP99Ms: number;
  /** send → receive of one key at a time, consumer long-polling. */
  idleP50Ms: number;
  idleP99Ms: number;
}

/** Unloaded latency: one key at a time, a consumer long-polling for it. */
async function latency(queue: KeyQueue, rounds: number): Promise<{ p50Ms: number; p99Ms: number }> {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const pending = queue.receive('vmi', 1, 5000);
    const at = performance.now();
    await queue.send([keyMessage(`lat/k${i}`, 1)]);
    const [rk] = await pending;
    ms.push(performance.now() - at);
    if (rk) await queue.ack('vmi', rk.receipt);
  }
  return { p50Ms: percentile(ms, 0.5), p99Ms: percentile(ms, 0.99) };
}

/**
 * A message as the relay sends a VMI key: with a view of tens of KB (the VMI and its pods), which
 * is what the queue stores and hands over in a burst.
 */
function withViewOf(m: KeyMessage, bytes: number): KeyMessage {
  const pod = { metadata: { name: `p-${m.key}`, namespace: 'bench', resourceVersion: '1' }, spec: { padding: 'x'.repeat(bytes) } };
  return { ...m, view: { reads: [{ resource: 'pods', namespace: 'bench', labelSelector: 'kubevirt.io', items: [pod] }], taken: { relay: 'bench', seq: 1 } } };
}

async function measure(queue: KeyQueue, keys: number, consumers = 4, viewBytes = 0): Promise<Figures> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const producer = (async () => {
    for (let i = 0; i < keys; i += 10) {
      const batch = Array.from({ length: Math.min(10, keys - i) }, (_, j) => keyMessage(`bench/k${i + j}`, 1)).map((m) => (viewBytes > 0 ? withViewOf(m, viewBytes) : m));
      const at = performance.now();
      for (const m of batch) sentAt.set(m.key, at);
      await queue.send(batch);
    }
  })();
  const consume = async (): Promise<void> => {
    while (latencies.length < keys) {
      const got = await queue.receive('vmi', 10, 200);
      const at = performance.now();
      for (const rk of got) {
        latencies.push(at - (sentAt.get(rk.message.key) ?? at));
        await queue.ack('vmi', rk.receipt);
      }
    }
  };
  await Promise.all([producer, ...Array.from({ length: consumers }, consume)]);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const idle = await latency(queue, 100);
  return {
    keys,
    cpuMsPerKey: Math.round(((cpu.user + cpu.system) / 1000 / keys) * 1000) / 1000,
    seconds: Math.round(seconds * 100) / 100,
    keysPerSecond: Math.round(keys / seconds),
    loadedP50Ms: percentile(latencies, 0.5),
    loadedP99Ms: percentile(latencies, 0.99),
    idleP50Ms: idle.p50Ms,
    idleP99Ms: idle.p99Ms,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const out: Record<string, Figures> = {};
  const dir = mkdtempSync(join(tmpdir(), 'queue-bench-'));
  try {
    const file = new SqliteKeyQueue({ db: join(dir, 'q.db') });
    out['sqlite (file, WAL)'] = await measure(file, 5000);
    await file.close();
    const viewed = new SqliteKeyQueue({ db: join(dir, 'q-views.db') });
    out['sqlite (file, WAL), 25 KB views'] = await measure(viewed, 2000, 4, 25_000);
    await viewed.close();
    const mem = new SqliteKeyQueue({ db: ':memory:' });
    out['sqlite (:memory:)'] = await measure(mem, 5000);
    await mem.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const sqs = await startLocalSqs();
  try {
    const q = new SqsKeyQueue({ client: sqs.client(), prefix: 'bench' });
    await q.ensureQueues(['vmi']);
    out['sqs (fauxqs, loopback)'] = await measure(q, 1000);
  } finally {
    await sqs.stop();
  }
  console.table(out);
  return out;
}

if (import.meta.main) await run();
