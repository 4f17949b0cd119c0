/** What one pass of the pool reconcile reads: the pool and its namespace's VMs, VMIs and revisions. */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePool } from '../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { PoolDeps } from './deps.ts';
import { poolRevisions } from './revisions.ts';

export interface Observed {
  readonly pool: VirtualMachinePool;
  /** Every VM of the namespace (names are taken by any of them). */
  readonly allVms: readonly VirtualMachine[];
  /** VMIs of the namespace by name (a VM's VMI has its name). */
  readonly vmis: ReadonlyMap<string, VirtualMachineInstance>;
  /** The pool's revisions by name. */
  readonly revisions: ReadonlyMap<string, V1ControllerRevision>;
}

/** Reads the namespace; `rv` = "not older than" (undefined = quorum). */
export async function observe(pool: VirtualMachinePool, deps: PoolDeps, rv: string | undefined): Promise<Observed> {
  const ns = pool.metadata?.namespace ?? '';
  const [vms, vmis, revisions] = await Promise.all([
    deps.kube.list(VMS, ns, { resourceVersion: rv }),
    deps.kube.list(VMIS, ns, { resourceVersion: rv }),
    deps.kube.list(CONTROLLER_REVISIONS, ns, { resourceVersion: rv }),
  ]);
  return {
    pool,
    allVms: vms.items,
    vmis: new Map(vmis.items.map((v) => [v.metadata?.name ?? '', v])),
    revisions: poolRevisions(pool, revisions.items),
  };
}
