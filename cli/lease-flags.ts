/**
 * What `takeover`, `handback` and `status` share: the cluster (`--kubeconfig`, else $KUBECONFIG,
 * ~/.kube/config, else the sandbox of `up`), KubeVirt's namespace and our holder identity
 * (docs/cutover.md).
 */
import { createKubeClient } from '../shared/kube/client-node.ts';
import { DEFAULT_KUBEVIRT_NAMESPACE, LeaseClient } from '../shared/cutover/lease.ts';
import { clusterConfig } from './ops-backend.ts';

/** Our holder identity unless `--identity` or $VR_LEASE_IDENTITY says otherwise. */
export const DEFAULT_IDENTITY = 'virt-reconciler';

export const LEASE_FLAGS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  identity: { type: 'string' },
  db: { type: 'string' },
} as const;

export const LEASE_HELP = `  --kubeconfig FILE     the cluster (default $KUBECONFIG, ~/.kube/config, else the sandbox of 'up')
  --namespace NS        KubeVirt's namespace, where the Lease virt-controller is (default ${DEFAULT_KUBEVIRT_NAMESPACE})
  --identity NAME       our holder identity (default $VR_LEASE_IDENTITY, else ${DEFAULT_IDENTITY})
  --db FILE             the embedded queue of 'up' (default .data/virt-reconciler.db)`;

export interface LeaseFlags {
  readonly kubeconfig?: string | undefined;
  readonly namespace?: string | undefined;
  readonly identity?: string | undefined;
  readonly db?: string | undefined;
}

/** The identity the flags and the environment name. */
export function identityOf(flags: LeaseFlags, env: NodeJS.ProcessEnv = process.env): string {
  return flags.identity ?? (env.VR_LEASE_IDENTITY || DEFAULT_IDENTITY);
}

/** A Lease client for the cluster the flags name. */
export function leaseClientFor(flags: LeaseFlags): LeaseClient {
  return new LeaseClient(createKubeClient(clusterConfig({ db: flags.db, kubeconfig: flags.kubeconfig })), { identity: identityOf(flags), ...(flags.namespace ? { namespace: flags.namespace } : {}) });
}

/** "12 s ago", "in 3 s". */
export function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return 'never';
  const s = Math.round((now - ms) / 1000);
  return s >= 0 ? `${s} s ago` : `in ${-s} s`;
}
