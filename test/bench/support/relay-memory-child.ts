/**
 * Child process of relay-memory.bench.ts (run with --expose-gc): starts a Relay against the API
 * server at RELAY_BENCH_URL with a queue that discards, and prints one JSON line with the heap
 * before the relay started and after it listed everything, both after a full GC.
 */
import { silentLogger } from '../../../shared/metrics/log.ts';
import { sandboxKubeConfig } from '../../../sandbox/apiserver/kubeconfig.ts';
import { Relay } from '../../../functions/relay/relay.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
};
const url = process.env.RELAY_BENCH_URL ?? '';
let sent = 0;
const queue = { send: async (m: readonly unknown[]) => void (sent += m.length) };
const kubeConfig = sandboxKubeConfig(url, 'relay');
await settle();
const before = process.memoryUsage().heapUsed;
const relay = new Relay({ kubeConfig, queue, log: silentLogger });
relay.start();
while (!relay.ready || relay.pending > 0) await new Promise((r) => setTimeout(r, 100));
await new Promise((r) => setTimeout(r, 500));
await settle();
const after = process.memoryUsage().heapUsed;
process.stdout.write(JSON.stringify({ before, after, watched: relay.watchedObjects, sent }) + '\n');
await relay.stop();
process.exit(0);
