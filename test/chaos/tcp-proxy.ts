/**
 * A TCP proxy on 127.0.0.1 in front of the API server, for the relay's connections only: a
 * network between the relay and the API server that can stall (bytes held back both ways for a
 * while, connections left open) or reset (every open connection destroyed with a TCP RST). TLS
 * passes through untouched (the server's certificate names 127.0.0.1, which the proxy is too).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

export interface TcpProxy {
  /** The proxy's URL: the target's with the proxy's port. */
  readonly url: string;
  /** Holds every byte back, both ways, for `ms` (new connections wait too). */
  stall(ms: number): void;
  /** Resets every open connection; returns how many. */
  reset(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const t = new URL(target);
  const port = Number(t.port || (t.protocol === 'https:' ? 443 : 80));
  const pairs = new Set<[Socket, Socket]>();
  let stalledUntil = 0;
  const waitStall = async () => {
    while (Date.now() < stalledUntil) await new Promise((r) => setTimeout(r, stalledUntil - Date.now()));
  };
  // Each direction is pumped by hand so a stall can hold chunks back without closing anything.
  const pump = (from: Socket, to: Socket) => {
    let chain = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (Date.now() >= stalledUntil) {
        if (!to.destroyed) to.write(chunk);
        return;
      }
      from.pause();
      chain = chain.then(async () => {
        await waitStall();
        if (!to.destroyed) to.write(chunk);
        from.resume();
      });
    });
    from.on('end', () => void chain.then(() => to.end()));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(port, t.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      if (!client.destroyed) client.destroy();
      if (!upstream.destroyed) upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    pump(client, upstream);
    pump(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the TCP proxy did not bind a port');
  const url = new URL(target);
  url.port = String(address.port);
  return {
    url: url.href.replace(/\/$/, ''),
    stall(ms) {
      stalledUntil = Math.max(stalledUntil, Date.now() + ms);
    },
    reset() {
      const n = pairs.size;
      for (const [a, b] of [...pairs]) {
        a.resetAndDestroy();
        b.resetAndDestroy();
      }
      pairs.clear();
      return n;
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}
