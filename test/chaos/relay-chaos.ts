/**
 * The relay of a chaos run, reaching the API server through a TCP proxy (tcp-proxy.ts) that the
 * fault loops stall and reset, and killable: `kill()` is a crash (what it had not sent yet is
 * lost, as a killed process's memory is) followed by a fresh relay that lists everything again.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Relay } from '../../functions/relay/relay.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { KeyQueue } from '../../shared/queue/port.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

export interface ChaosRelay {
  readonly proxy: TcpProxy;
  readonly injected: { relayKills: number; keysLostWithRelay: number; networkStalls: number; networkResets: number };
  start(): void;
  /** Crash and restart: see the module comment. */
  kill(): Promise<void>;
  /** Stall the relay's network for `ms`. */
  stall(ms: number): void;
  /** Reset every connection of the relay. */
  reset(): void;
  /** Lists the relay made, its first ones included (then one per 410 Gone, failing watch, restart). */
  relists(): number;
  stop(): Promise<void>;
}

const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };

/** A kubeconfig like `kc` whose server is `server`. */
function through(kc: KubeConfig, server: string): KubeConfig {
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return out;
}

export async function startChaosRelay(opts: { kubeConfig: KubeConfig; queue: Pick<KeyQueue, 'send'>; metrics: MetricsRegistry; log?: Logger }): Promise<ChaosRelay> {
  const server = opts.kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error('the relay kubeconfig has no server');
  const proxy = await startTcpProxy(server);
  const kubeConfig = through(opts.kubeConfig, proxy.url);
  const injected = { relayKills: 0, keysLostWithRelay: 0, networkStalls: 0, networkResets: 0 };
  let alive = { value: true };
  const make = (): Relay => {
    const life = alive;
    // Once killed, this incarnation's sends go nowhere: its outbox died with it.
    const queue = {
      send: async (messages: readonly KeyMessage[]) => {
        if (!life.value) {
          injected.keysLostWithRelay += messages.length;
          return;
        }
        await opts.queue.send(messages);
      },
    };
    return new Relay({ kubeConfig, queue, log: opts.log ?? quiet, metrics: opts.metrics });
  };
  let relay = make();
  let started = false;
  return {
    proxy,
    injected,
    start() {
      relay.start();
      started = true;
    },
    async kill() {
      if (!started) return;
      injected.relayKills++;
      alive.value = false;
      const dead = relay;
      // Its watches go on closing in the background; nothing it sends arrives; its metrics go with
      // it at once, as a dead process's do (the soak found every killed relay kept by the shared registry).
      dead.detachMetrics();
      void dead.stop().catch(() => undefined);
      alive = { value: true };
      relay = make();
      relay.start();
    },
    stall(ms) {
      injected.networkStalls++;
      proxy.stall(ms);
    },
    reset() {
      injected.networkResets++;
      proxy.reset();
    },
    relists: () => opts.metrics.total('relay_watch_restarts_total', { why: 'relist' }),
    async stop() {
      await relay.stop();
      await proxy.close();
    },
  };
}
