/**
 * Relay memory per watched object (target ≤ 20 KB) at 10,000 objects (BENCH_RELAY_OBJECTS):
 * the objects are created in a sandbox API server in this process; the relay runs alone in a
 * child process with --expose-gc against a queue that discards, and reports its heap growth
 * after a full GC once it has listed and mapped everything. Never a test.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServer } from '../../sandbox/apiserver/index.ts';
import { vmiManifest } from './support/vmi-run.ts';

const OBJECTS = Number(process.env.BENCH_RELAY_OBJECTS ?? (process.env.BENCH_QUICK === '1' ? 3000 : 10_000));

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

export async function run(): Promise<Record<string, unknown>> {
  const server = await startApiServer({ watchHistory: 100 });
  try {
    const api = server.kubeConfig('bench-user').makeApiClient(CustomObjectsApi);
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < OBJECTS) {
          const i = next++;
          await api.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', body: vmiManifest(`mem-${i}`) });
          if ((i + 1) % 2500 === 0) say(`${i + 1}/${OBJECTS} VMIs created`);
        }
      }),
    );
    say('relay listing them in a child process …');
    // Asynchronously: the API server answering the child lives in this process's event loop.
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', join(import.meta.dirname, 'support/relay-memory-child.ts')], {
      env: { ...process.env, RELAY_BENCH_URL: server.url, NODE_OPTIONS: '' },
      maxBuffer: 1 << 20,
    });
    const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { before: number; after: number; watched: number; sent: number };
    const perObjectBytes = Math.round((r.after - r.before) / Math.max(1, r.watched));
    say(`${r.watched} objects watched: heap +${Math.round((r.after - r.before) / 1024)} KiB, ${perObjectBytes} B per object`);
    return { objects: OBJECTS, watched: r.watched, keysSent: r.sent, heapBeforeBytes: r.before, heapAfterBytes: r.after, perObjectBytes, perObjectKB: Math.round(perObjectBytes / 102.4) / 10 };
  } finally {
    await server.close();
  }
}
