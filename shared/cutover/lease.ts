/**
 * virt-controller's leader election Lease, read and written as client-go's leader elector does
 * (docs/cutover.md): `virt-controller` in KubeVirt's namespace, `coordination.k8s.io/v1`, every
 * write a PUT with the resourceVersion read (a racing candidate gets a Conflict, never both win).
 *
 * KubeVirt's virt-controller leads only while it holds this Lease (15 s lease, 10 s renew
 * deadline, 2 s retry by default: `--leader-elect-*` flags) and exits when it loses it. Taking it
 * over is writing our identity into it; the old leader then fails its next renewal and stops
 * within its renew deadline. The renew deadline is not in the Lease; its lease duration is, and
 * client-go requires renew deadline < lease duration — so "the old holder's lease duration + a
 * margin after we wrote" is when the old leader has certainly stopped. That instant is written
 * into the Lease (annotation {@link WRITABLE_AFTER}), so every function reading it knows when it
 * may write.
 */
import { LEASES, type CoordinationLease } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { AlreadyExistsError, KubeTransientError } from '../kube/errors.ts';
import { DEFAULT_KUBEVIRT_NAMESPACE } from '../kube/kubevirt-identity.ts';

/** The Lease's name (KubeVirt's `leaderelectionconfig.DefaultLeaseName`). */
export const LEASE_NAME = 'virt-controller';
/** KubeVirt's namespace when the deployment does not say otherwise: the one the identity rules use too. */
export { DEFAULT_KUBEVIRT_NAMESPACE };
/** When we may write after a takeover (epoch ms, decimal): the old leader has stopped by then. */
export const WRITABLE_AFTER = 'virt-reconciler.io/writable-after';
/** Set by `handback`: we hold the Lease only to let in-flight keys settle; nothing writes. */
export const HANDING_BACK = 'virt-reconciler.io/handing-back';

/** Leader election timings, as KubeVirt's flags name them. */
export interface LeaderTimings {
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
}

/** KubeVirt's defaults (pkg/virt-controller/leaderelectionconfig): ours too. */
export const KUBEVIRT_LEADER_TIMINGS: LeaderTimings = { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 };

/** Added to the old holder's lease duration before we write after a takeover. */
export const TAKEOVER_MARGIN_MS = 2000;

/** What a Lease says, in epoch ms. */
export interface LeaseView {
  readonly exists: boolean;
  /** Empty or absent: released. */
  readonly holder: string | undefined;
  readonly acquiredAt: number | undefined;
  readonly renewedAt: number | undefined;
  readonly durationMs: number;
  readonly transitions: number;
  readonly writableAfter: number | undefined;
  readonly handingBack: boolean;
  readonly resourceVersion: string | undefined;
}

function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** The view of a Lease object (undefined: there is none). */
export function viewOf(lease: CoordinationLease | undefined): LeaseView {
  const spec = lease?.spec ?? {};
  const after = Number(lease?.metadata?.annotations?.[WRITABLE_AFTER]);
  return {
    exists: lease !== undefined,
    holder: spec.holderIdentity || undefined,
    acquiredAt: parseTime(spec.acquireTime),
    renewedAt: parseTime(spec.renewTime),
    durationMs: (spec.leaseDurationSeconds ?? 0) * 1000,
    transitions: spec.leaseTransitions ?? 0,
    writableAfter: Number.isFinite(after) && after > 0 ? after : undefined,
    handingBack: lease?.metadata?.annotations?.[HANDING_BACK] === 'true',
    resourceVersion: lease?.metadata?.resourceVersion,
  };
}

/** Someone holds it and renewed it within its lease duration. */
export function isHeldLive(v: LeaseView, now: number): boolean {
  return v.holder !== undefined && v.renewedAt !== undefined && now < v.renewedAt + v.durationMs;
}

/** A MicroTime as the API server writes it: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The result of {@link LeaseClient.acquire}. */
export type AcquireResult =
  | { readonly acquired: true; readonly previous: string | undefined; readonly writableAfter: number }
  | { readonly acquired: false; readonly holder: string; readonly renewedAt: number | undefined };

export interface LeaseClientOptions {
  readonly namespace?: string;
  readonly identity: string;
  readonly timings?: LeaderTimings;
  /** Wall clock: Lease times are real times, whatever clock the controllers run on. */
  readonly now?: () => number;
}

/** Reads and writes the Lease for one identity. */
export class LeaseClient {
  readonly namespace: string;
  readonly identity: string;
  readonly timings: LeaderTimings;
  readonly #kube: KubeClient;
  readonly #now: () => number;

  constructor(kube: KubeClient, opts: LeaseClientOptions) {
    this.#kube = kube;
    this.namespace = opts.namespace ?? DEFAULT_KUBEVIRT_NAMESPACE;
    this.identity = opts.identity;
    this.timings = opts.timings ?? KUBEVIRT_LEADER_TIMINGS;
    this.#now = opts.now ?? Date.now;
  }

  async read(): Promise<{ lease: CoordinationLease | undefined; view: LeaseView }> {
    const lease = await this.#kube.get(LEASES, this.namespace, LEASE_NAME);
    return { lease, view: viewOf(lease) };
  }

  /**
   * Takes the Lease: when it is free, expired or already ours, at once; held live by another only
   * with `force` (a takeover), and then we may write only after the holder's lease duration plus
   * {@link TAKEOVER_MARGIN_MS}. A racing writer makes this answer "not acquired" (Conflict).
   */
  async acquire(opts: { force?: boolean } = {}): Promise<AcquireResult> {
    // A takeover races the holder's renewals (every retry period): read again and retry a few times.
    for (let attempt = 0; ; attempt++) {
      const r = await this.#acquireOnce(opts);
      if (r.acquired || !opts.force || attempt >= 4) return r;
    }
  }

  async #acquireOnce(opts: { force?: boolean }): Promise<AcquireResult> {
    const now = this.#now();
    const { lease, view } = await this.read();
    const ours = view.holder === this.identity;
    const live = isHeldLive(view, now);
    if (live && !ours && !opts.force) return { acquired: false, holder: view.holder!, renewedAt: view.renewedAt };
    // A live other holder may act until its renew deadline, which is shorter than its lease duration.
    const writableAfter = live && !ours ? now + view.durationMs + TAKEOVER_MARGIN_MS : ours ? (view.writableAfter ?? now) : now;
    const spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.timings.leaseDurationSeconds,
      acquireTime: ours && view.acquiredAt !== undefined ? microTime(view.acquiredAt) : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: ours ? view.transitions : view.exists ? view.transitions + 1 : 0,
    };
    const annotations: Record<string, string> = { ...lease?.metadata?.annotations, [WRITABLE_AFTER]: String(writableAfter) };
    delete annotations[HANDING_BACK];
    try {
      if (!lease) await this.#kube.create(LEASES, { metadata: { name: LEASE_NAME, namespace: this.namespace, annotations }, spec });
      else await this.#kube.update(LEASES, { ...lease, metadata: { ...lease.metadata, annotations }, spec });
    } catch (err) {
      if (isRace(err)) return { acquired: false, holder: view.holder ?? '(a racing candidate)', renewedAt: view.renewedAt };
      throw err;
    }
    return { acquired: true, previous: ours ? undefined : view.holder, writableAfter };
  }

  /** Renews the Lease if it is ours; false when it is not (any more) or a racing write won. */
  async renew(): Promise<boolean> {
    const { lease, view } = await this.read();
    if (!lease || view.holder !== this.identity) return false;
    try {
      await this.#kube.update(LEASES, { ...lease, spec: { ...lease.spec, renewTime: microTime(this.#now()) } });
      return true;
    } catch (err) {
      if (isRace(err)) return false;
      throw err;
    }
  }

  /** Marks the Lease as being handed back: functions stop writing at their next read of it. */
  markHandingBack(): Promise<boolean> {
    return retryOnConflict(() => this.#markHandingBack());
  }

  async #markHandingBack(): Promise<boolean> {
    const { lease, view } = await this.read();
    if (!lease || view.holder !== this.identity) return false;
    await this.#kube.update(LEASES, { ...lease, metadata: { ...lease.metadata, annotations: { ...lease.metadata?.annotations, [HANDING_BACK]: 'true' } } });
    return true;
  }

  /**
   * Releases the Lease as client-go's leader elector does on a clean stop (no holder, 1 s
   * duration): a standby candidate takes it at its next retry.
   */
  release(): Promise<boolean> {
    return retryOnConflict(() => this.#release());
  }

  async #release(): Promise<boolean> {
    const { lease, view } = await this.read();
    if (!lease || view.holder !== this.identity) return false;
    const now = microTime(this.#now());
    const annotations = { ...lease.metadata?.annotations };
    delete annotations[HANDING_BACK];
    delete annotations[WRITABLE_AFTER];
    await this.#kube.update(LEASES, { ...lease, metadata: { ...lease.metadata, annotations }, spec: { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: view.transitions } });
    return true;
  }
}

/** Our own keeper renews the Lease meanwhile: a Conflict is read again and retried. */
async function retryOnConflict<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isRace(err) || attempt >= 5) throw err;
    }
  }
}

function isRace(err: unknown): boolean {
  return err instanceof AlreadyExistsError || (err instanceof KubeTransientError && err.reason === 'Conflict');
}
