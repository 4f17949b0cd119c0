/**
 * What the end-to-end benchmarks and the chaos suite share: a sandbox sized for N VMIs, a VMI
 * manifest, a creator that records when each create was sent, and a tracker that follows the
 * audit log (launcher pod creates per VMI, first Scheduled, first Running) on the sandbox clock.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { KIND_VMI } from '../../../shared/api/well-known.ts';
import type { AuditEntry } from '../../../infra/sandbox/apiserver/index.ts';
import { startSandbox, type Sandbox } from '../../../infra/sandbox/sandbox.ts';
import type { ControlPlane } from '../../../infra/sandbox/real/control-plane.ts';

/** The identity VMIs are created with (apart from the controllers' own). */
export const USER_IDENTITY = 'bench-user';
/** The identity the system under test uses. */
export const CONTROLLER_IDENTITY = 'virt-reconciler';

/** A sandbox with room for `vmis` launcher pods (110 pods per node) and quick simulated boots. */
export async function sandboxFor(vmis: number, opts: { podStartupMs?: number; vmiBootMs?: number; controlPlane?: ControlPlane } = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({
    ...(opts.controlPlane ? { controlPlane: opts.controlPlane } : {}),
    nodes: Math.ceil(vmis / 100) + 1,
    timings: { podStartupMs: opts.podStartupMs ?? 200, vmiBootMs: opts.vmiBootMs ?? 200 },
  });
  // Every write of a 1,000-VMI run must stay in the audit log.
  sandbox.apiServer.audit.limit = Math.max(sandbox.apiServer.audit.limit, vmis * 100);
  return sandbox;
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

/** Follows the audit log; see the module comment. */
export class VmiTracker {
  readonly vmis = new Map<string, VmiMilestones>();
  readonly #unsubscribe: () => void;

  constructor(sandbox: Sandbox) {
    this.#unsubscribe = sandbox.apiServer.audit.subscribe((e) => this.#see(e));
  }

  #get(name: string): VmiMilestones {
    let m = this.vmis.get(name);
    if (!m) this.vmis.set(name, (m = { podCreates: 0 }));
    return m;
  }

  #see(e: AuditEntry): void {
    if (e.resource === 'pods' && e.verb === 'create' && e.type === 'ADDED') {
      const owner = (e.object.metadata.ownerReferences as { kind?: string; name?: string; controller?: boolean }[] | undefined)?.find((r) => r.kind === KIND_VMI && r.controller);
      if (!owner?.name) return;
      const m = this.#get(owner.name);
      m.podCreates++;
      m.podCreatedAt ??= e.time;
    } else if (e.resource === 'virtualmachineinstances' && e.type !== 'DELETED') {
      const phase = (e.object as { status?: { phase?: string } }).status?.phase ?? '';
      const m = this.#get(e.name);
      if (HANDED_OFF.has(phase)) m.scheduledAt ??= e.time;
      if (phase === 'Running') m.runningAt ??= e.time;
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
  sandbox: Sandbox,
  tracker: VmiTracker,
  names: readonly string[],
  opts: { concurrency?: number; ratePerSec?: number; namespace?: string; onProgress?: (done: number) => void },
): Promise<void> {
  const api = sandbox.apiServer.kubeConfig(USER_IDENTITY).makeApiClient(CustomObjectsApi);
  const create = async (name: string) => {
    tracker.sent(name, sandbox.clock.nowMs());
    await api.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: opts.namespace ?? 'default', plural: 'virtualmachineinstances', body: vmiManifest(name, opts.namespace) });
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

/** The p-quantile (0..1) of `values`, rounded to 0.1. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0) * 10) / 10;
}

/** `vmi-00001`, … */
export function vmiNames(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(5, '0')}`);
}
