/**
 * client-node's watch with our inactivity limit (shared/kube/watch.ts): a server that sends one
 * event and then nothing. client-node's own limit (30 s) ended such a stream, and with it every
 * quiet watch of the relay, every 30 s; the limit set here is the one that applies.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { watchClient } from '../../shared/kube/watch.ts';
import { BOOKMARK_CADENCE_MS, WATCH_INACTIVITY_MS, WATCH_TIMEOUT_SECONDS } from '../../functions/relay/reflector.ts';
import { NODE_WATCH_INACTIVITY_MS } from '../../sandbox/nodes/watched-cache.ts';

const open: ServerResponse[] = [];
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  res.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'a', namespace: 'default', resourceVersion: '5' } } })}\n`);
  open.push(res); // and then silence, as a quiet resource's watch
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
after(() => {
  for (const res of open) res.destroy();
  server.close();
});

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  const port = (server.address() as AddressInfo).port;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return kc;
}

/** Watches until the stream ends or `waitMs` passes: the events seen and how it ended. */
async function watchFor(inactivityMs: number, waitMs: number): Promise<{ events: string[]; ended: string | undefined; afterMs: number }> {
  const events: string[] = [];
  const t0 = performance.now();
  let ended: string | undefined;
  let afterMs = 0;
  const finished = new Promise<void>((resolve) => {
    void watchClient(kubeConfig(), inactivityMs)
      .watch('/api/v1/pods', { allowWatchBookmarks: true }, (type) => events.push(type), (err: unknown) => {
        ended = err instanceof Error || err instanceof DOMException ? (err as Error).name : String(err);
        afterMs = performance.now() - t0;
        resolve();
      })
      .then((ac) => setTimeout(() => ac.abort(), waitMs).unref());
  });
  await Promise.race([finished, new Promise((r) => setTimeout(r, waitMs + 200))]);
  return { events, ended, afterMs };
}

test('a stream silent for longer than the limit ends as a timeout: the limit is the one set here', async () => {
  const r = await watchFor(300, 3000);
  assert.deepEqual(r.events, ['ADDED']);
  assert.equal(r.ended, 'TimeoutError');
  assert.ok(r.afterMs >= 250 && r.afterMs < 2500, `ended after ${r.afterMs} ms`);
});

test('a stream silent for less than the limit stays open', async () => {
  const r = await watchFor(5000, 800);
  assert.deepEqual(r.events, ['ADDED']);
  // Ended by our own abort at 800 ms, not by a timeout.
  assert.notEqual(r.ended, 'TimeoutError');
  assert.ok(r.afterMs >= 750, `ended after ${r.afterMs} ms`);
});

test("the relay's limit lies past the bookmark cadence (a quiet watch stays open) and short of its watches' server-side timeout (a dead one is given up sooner); the node side's past the API server's 60 min", () => {
  assert.ok(WATCH_INACTIVITY_MS >= BOOKMARK_CADENCE_MS * 1.5, `${WATCH_INACTIVITY_MS} ms against bookmarks every ${BOOKMARK_CADENCE_MS} ms`);
  assert.ok(WATCH_INACTIVITY_MS < WATCH_TIMEOUT_SECONDS * 1000);
  assert.ok(NODE_WATCH_INACTIVITY_MS > 60 * 60 * 1000);
});

test('a limit out of range is refused, naming it', () => {
  assert.throws(() => watchClient(kubeConfig(), 0), /inactivity limit must be/);
  assert.throws(() => watchClient(kubeConfig(), Number.POSITIVE_INFINITY), /got Infinity/);
});
