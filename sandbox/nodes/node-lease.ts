/**
 * The kubelets' heartbeat on a real control plane: one Lease per node in `kube-node-lease`
 * (holder = the node, 40 s duration, owned by the Node), renewed every 10 s of real time as the
 * kubelet does. The node lifecycle controller marks a node whose lease and status stop changing
 * NotReady/Unknown and taints it; renewing keeps the simulated nodes Ready and schedulable. Real
 * time, not the sandbox clock: the controller judges staleness on its own (real) clock.
 */
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { pooledApiClient } from '../../shared/kube/connections.ts';
import { statusCodeOf, type NodeSideApi } from './api.ts';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const LEASE_DURATION_S = 40;
const RENEW_EVERY_MS = 10_000;

/**
 * A Lease's renewTime is a MicroTime: six fraction digits, which the API server insists on
 * (`.099Z` is a 400). client-node serialises Dates with toISOString(), hence this override.
 */
class MicroTime extends Date {
  override toISOString(): string {
    return super.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  }
}

export interface NodeLeases {
  stop(): Promise<void>;
}

/** Creates (or takes over) the nodes' leases and renews them until stopped. */
export async function startNodeLeases(api: NodeSideApi, nodeNames: readonly string[], onError?: (what: string, err: unknown) => void): Promise<NodeLeases> {
  const coordination = pooledApiClient(api.kc, CoordinationV1Api);
  const uids = new Map<string, string>();
  for (const name of nodeNames) uids.set(name, (await api.core.readNode({ name })).metadata?.uid ?? '');

  const renew = async (name: string) => {
    const renewTime = new MicroTime();
    try {
      const lease = await coordination.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE });
      lease.spec = { ...lease.spec, holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_S, renewTime };
      await coordination.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: lease });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      const body: V1Lease = {
        metadata: { name, namespace: NODE_LEASE_NAMESPACE, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: uids.get(name) ?? '' }] },
        spec: { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_S, renewTime },
      };
      await coordination.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body });
    }
  };
  const renewAll = () => Promise.all(nodeNames.map((n) => renew(n).catch((err: unknown) => onError?.(`renewing the lease of ${n}`, err))));
  await Promise.all(nodeNames.map(renew));
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = renewAll();
  }, RENEW_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
