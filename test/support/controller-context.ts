/**
 * A controller definition bound the way a test harness wants it (the chaos and bench runs, the
 * VMI slice): the context's parts the test cares about are given, the rest are defaults that say
 * so when a controller reaches for them.
 */
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { NO_VIRT_API } from '../../shared/kube/virt-api.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { bindController, type ControllerContext, type ControllerDefinition } from '../../shared/reconcile/define-controller.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';

/** A part of the context the test did not give: any use of it fails, naming it. */
function missing<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_t, prop) => {
      throw new Error(`the test's controller context has no ${what} (used: ${String(prop)})`);
    },
  });
}

/** `def` in a context made of `given` and defaults. */
export function testSpec<D>(def: ControllerDefinition<D>, given: Partial<ControllerContext>): ControllerSpec<D> {
  const ctx: ControllerContext = {
    kube: missing<KubeClient>('kube'),
    expectations: missing('expectations'),
    leases: missing('leases'),
    clusterConfig: async () => clusterConfigFromKubeVirt(),
    log: silentLogger,
    now: Date.now,
    virtApi: NO_VIRT_API,
    metrics: new MetricsRegistry(),
    ...given,
  };
  return bindController(def, ctx);
}
