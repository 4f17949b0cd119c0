/**
 * Wall time spent waiting on the Kubernetes API, summed over every call a client makes: the
 * "API server time" part of a reconcile's duration.
 */
import { decorateKubeClient } from '../../../shared/kube/call-counter.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';

export class CallTimer {
  calls = 0;
  totalMs = 0;
  readonly samples: number[] = [];
  add(ms: number): void {
    this.calls++;
    this.totalMs += ms;
    if (this.samples.length < 200_000) this.samples.push(ms);
  }
}

/** `inner` with every call's duration added to `timer`. */
export function timedKubeClient(inner: KubeClient, timer: CallTimer): KubeClient {
  return decorateKubeClient(inner, async (_method, _args, call) => {
    const t0 = performance.now();
    try {
      return await call();
    } finally {
      timer.add(performance.now() - t0);
    }
  });
}

/**
 * Installs the timing wrapper on an existing client object in place (the local runtime builds
 * its client itself; its reconciles look the methods up on that object at every call).
 */
export function timeInPlace(client: KubeClient, timer: CallTimer): void {
  Object.assign(client, timedKubeClient({ ...client }, timer));
}
