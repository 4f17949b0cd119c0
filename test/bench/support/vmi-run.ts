/**
 * What the end-to-end benchmarks and the chaos suite share: a sandbox sized for N VMIs, a VMI
 * manifest, a creator that records when each create was sent, and a tracker that follows the
 * audit log's milestones (launcher pod creates per VMI, first Scheduled, first Running) on the
 * sandbox clock — for a cluster in this process or in a child process (cluster.ts).
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pooledApiClient } from '../../../shared/kube/connections.ts';
import type { Sandbox } from '../../../sandbox/sandbox.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import { startBenchSandbox } from './cluster-child.ts';
import type { BenchCluster } from './cluster.ts';
import type { Milestone } from './milestones.ts';

/** The identity VMIs are created with (apart from the controllers' own). */
export const USER_IDENTITY = 'bench-user';
/** The identity the system under test uses. */
export const CONTROLLER_IDENTITY = 'virt-reconciler';

/** A sandbox in this process with room for `vmis` launcher pods and quick simulated boots (chaos runs; benchmarks use cluster.ts). */
export async function sandboxFor(vmis: number, opts: { podStartupMs?: number; vmiBootMs?: number; controlPlane?: ControlPlane } = {}): Promise<Sandbox> {
  return startBenchSandbox({ vmis, ...opts });
}

/** A small container-disk VMI. */
export function vmiManifest(name: string, namespace = 'default'): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace, labels: { bench: 'true' } },
    spec: {
      domain: { resources: { requests: { memory: '64Mi' } }, devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] } },
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0' } }],
    },
  };
}

/** Per-VMI milestones on the sandbox clock (ms). */
export interface VmiMilestones {
  createSentAt?: number;
  podCreatedAt?: number;
  podCreates: number;
  scheduledAt?: number;
  runningAt?: number;
}

const HANDED_OFF = new Set(['Scheduled', 'Running', 'Succeeded']);

/** Follows the cluster's milestones; see the module comment. */
export class VmiTracker {
  readonly vmis = new Map<string, VmiMilestones>();
  readonly #unsubscribe: () => void;

  constructor(cluster: Pick<BenchCluster, 'onMilestone'>) {
    this.#unsubscribe = cluster.onMilestone((m) => this.#see(m));
  }

  #get(name: string): VmiMilestones {
    let m = this.vmis.get(name);
    if (!m) this.vmis.set(name, (m = { podCreates: 0 }));
    return m;
  }

  #see(e: Milestone): void {
    if (e.kind === 'pod') {
      const m = this.#get(e.vmi);
      m.podCreates++;
      m.podCreatedAt ??= e.time;
    } else if (e.kind === 'vmi') {
      const m = this.#get(e.name);
      if (HANDED_OFF.has(e.phase)) m.scheduledAt ??= e.time;
      if (e.phase === 'Running') m.runningAt ??= e.time;
    }
  }

  /** Called just before a create is sent. */
  sent(name: string, at: number): void {
    this.#get(name).createSentAt = at;
  }

  count(pred: (m: VmiMilestones) => boolean): number {
    let n = 0;
    for (const m of this.vmis.values()) if (pred(m)) n++;
    return n;
  }

  stop(): void {
    this.#unsubscribe();
  }
}

/**
 * Creates `names` as `bench-user`, `concurrency` requests at a time, or paced at `ratePerSec`
 * (one at a time on a fixed schedule) when given. Records each send time in `tracker`.
 */
export async function createVmis(
  cluster: Pick<BenchCluster, 'kubeConfig' | 'nowMs'>,
  tracker: VmiTracker,
  names: readonly string[],
  opts: { concurrency?: number; ratePerSec?: number; namespace?: string; onProgress?: (done: number) => void },
): Promise<void> {
  const api = pooledApiClient(cluster.kubeConfig(USER_IDENTITY), CustomObjectsApi);
  const create = async (name: string) => {
    tracker.sent(name, cluster.nowMs());
    // A user retries what the network lost (the chaos lanes restart kube-apiserver and reset
    // connections mid-burst); a retry that finds the VMI made by the lost attempt is done.
    for (let attempt = 1; ; attempt++) {
      try {
        await api.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: opts.namespace ?? 'default', plural: 'virtualmachineinstances', body: vmiManifest(name, opts.namespace) });
        return;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (attempt > 1 && code === 409) return;
        const lost = err instanceof TypeError || code === 429 || (code !== undefined && code >= 500);
        if (!lost || attempt >= 10) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  };
  let done = 0;
  if (opts.ratePerSec) {
    const t0 = performance.now();
    const inFlight: Promise<void>[] = [];
    for (const [i, name] of names.entries()) {
      const due = t0 + (i * 1000) / opts.ratePerSec;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(create(name).then(() => opts.onProgress?.(++done)));
    }
    await Promise.all(inFlight);
    return;
  }
  const queue = [...names];
  await Promise.all(
    Array.from({ length: opts.concurrency ?? 20 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        await create(name);
        opts.onProgress?.(++done);
      }
    }),
  );
}

/** Polls `pred` every 100 ms until it holds or `timeoutMs` passes; `progress` every ~5 s. */
export async function waitUntil(pred: () => boolean, timeoutMs: number, progress?: () => void): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  let lastReport = performance.now();
  while (!pred()) {
    if (performance.now() >= deadline) return false;
    if (progress && performance.now() - lastReport > 5000) {
      progress();
      lastReport = performance.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}


/** `vmi-00001`, … */
export function vmiNames(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(5, '0')}`);
}

/** Polls the async `pred` every `everyMs` until it holds or `timeoutMs` (wall) pass; answers whether it held. */
export async function waitUntilAsync(pred: () => Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await pred()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return false;
}
