/**
 * Faults only the real control plane has (the real lane, VR_CONTROL_PLANE=real), injected from
 * outside the server as an operator or an outage would:
 * - kube-apiserver killed and restarted mid-burst, etcd kept (SIGUSR1 to our control-plane
 *   binary, infra/control-plane/serve.go), so every watch and connection drops at once and the
 *   restarted server's watch cache starts at the current revision (older watches get 410);
 * - etcd compacted to its current revision (etcd's gRPC gateway, `/v3/kv/compaction`), so
 *   re-watches from older resourceVersions are answered 410 Gone and the relay relists;
 * - API Priority and Fairness turned low for the controllers: a PriorityLevelConfiguration of no
 *   concurrency share (nothing lent, nothing borrowed) that rejects rather than queues, and a
 *   FlowSchema sending the controllers' users to it, so their requests are answered 429 — then
 *   removed again 1–3 s later;
 * plus, on both lanes, the relay's network stalled or reset and the relay killed (relay-chaos.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import type { RealApiServer } from '../../sandbox/real/control-plane.ts';
import type { FaultLoop } from './injectors.ts';
import type { ChaosRelay } from './relay-chaos.ts';

const APF_NAME = 'chaos-starved';

interface ReadyFile {
  pid: number;
  etcd: string;
}

async function readyFile(server: RealApiServer): Promise<ReadyFile> {
  const info = JSON.parse(await readFile(join(server.dir, 'ready.json'), 'utf8')) as { pid?: number; etcd?: string };
  if (!info.pid || !info.etcd) throw new Error(`${join(server.dir, 'ready.json')} names no pid or etcd URL: the control-plane binary predates the chaos hooks (rebuild: npm run control-plane:build)`);
  return { pid: info.pid, etcd: info.etcd };
}

/** Waits until the API server answers /readyz again (up to 2 minutes). */
async function waitReady(admin: KubeConfig): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(admin);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await api.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`kube-apiserver did not come back within 2 minutes: ${err instanceof Error ? err.message : String(err)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Compacts etcd to its current revision; returns the revision. */
export async function compactEtcd(etcd: string): Promise<number> {
  const post = async (path: string, body: object) => {
    const res = await fetch(`${etcd}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { header?: { revision?: string } };
  };
  const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
  const revision = Number(range.header?.revision ?? 0);
  await post('/v3/kv/compaction', { revision, physical: false });
  return revision;
}

/** The APF objects that starve `users`: no seat, reject rather than queue. */
function apfObjects(users: readonly string[]): object[] {
  return [
    {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: APF_NAME },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
    },
    {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: APF_NAME },
      spec: {
        priorityLevelConfiguration: { name: APF_NAME },
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: users.map((name) => ({ kind: 'User', user: { name } })),
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          },
        ],
      },
    },
  ];
}

/**
 * Every 0.5–2 s one fault: the relay's network stalled for up to 3 s (25 %) or reset (20 %),
 * etcd compacted and the relay's connections reset so it re-watches from a compacted revision
 * (15 %), APF starvation of the controllers for 1–3 s (20 %), the relay killed and
 * restarted (10 %), kube-apiserver restarted (10 %; at most one every 20 s, and only
 * `apiServerRestarts` in all).
 */
export function startRealFaultLoop(server: RealApiServer, random: () => number, hooks: { relay: ChaosRelay; controllerUsers: readonly string[]; apiServerRestarts?: number }): FaultLoop {
  // The relay's own faults (stalls, resets, kills) are counted by the relay (relay-chaos.ts).
  const injected: Record<string, number> = { apiServerRestarts: 0, etcdCompactions: 0, apfOn: 0 };
  const admin = server.kubeConfig('admin');
  const api = KubernetesObjectApi.makeApiClient(admin);
  let apf = false;
  const setApf = async (on: boolean) => {
    const objects = apfObjects(hooks.controllerUsers);
    if (on) for (const o of objects) await api.create(o as never).catch((err: { code?: number }) => (err.code === 409 ? undefined : Promise.reject(err)));
    else for (const o of [...objects].reverse()) await api.delete(o as never).catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err)));
    apf = on;
  };
  let lastRestart = 0;
  let on = true;
  const errors: string[] = [];
  const loop = (async () => {
    const ready = await readyFile(server);
    while (on) {
      await new Promise((r) => setTimeout(r, 500 + random() * 1500));
      if (!on) break;
      const pick = random();
      try {
        if (pick < 0.25) {
          hooks.relay.stall(Math.floor(random() * 3000));
        } else if (pick < 0.45) {
          hooks.relay.reset();
        } else if (pick < 0.6) {
          await compactEtcd(ready.etcd);
          hooks.relay.reset();
          injected.etcdCompactions!++;
        } else if (pick < 0.8) {
          // A burst of 1–3 s: long enough for every controller in flight to be refused, short of
          // an outage (the queue's retries, not APF, would then be under test).
          await setApf(true);
          injected.apfOn!++;
          await new Promise((r) => setTimeout(r, 1000 + random() * 2000));
          await setApf(false);
        } else if (pick < 0.9) {
          await hooks.relay.kill();
        } else if (Date.now() - lastRestart > 20_000 && injected.apiServerRestarts! < (hooks.apiServerRestarts ?? 3)) {
          lastRestart = Date.now();
          process.kill(ready.pid, 'SIGUSR1');
          injected.apiServerRestarts!++;
          // The server is down for a few seconds; the next fault waits until it is back.
          await new Promise((r) => setTimeout(r, 500));
          await waitReady(admin);
        }
      } catch (err) {
        // A fault that could not be injected (the server restarting) is one fault fewer.
        if (errors.length < 5) errors.push(err instanceof Error ? err.message : String(err));
      }
    }
  })();
  return {
    injected,
    async stop() {
      on = false;
      await loop;
      // Calm: APF back to the defaults, the server answering.
      await waitReady(admin);
      await setApf(false);
      if (errors.length) injected.faultsNotInjected = errors.length;
    },
  };
}
