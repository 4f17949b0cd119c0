/** Events about a pool (component `virtualmachinepool-controller`), best effort as client-go's recorder. */
import type { VirtualMachinePool } from '../../shared/api/index.ts';
import type { PoolDeps } from './deps.ts';
import { KIND_POOL, POOL_API_VERSION } from './well-known.ts';

export async function poolEvent(deps: PoolDeps, pool: VirtualMachinePool, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
  try {
    await deps.kube.createEvent({
      involvedObject: { apiVersion: POOL_API_VERSION, kind: KIND_POOL, namespace: pool.metadata?.namespace, name: pool.metadata?.name ?? '', uid: pool.metadata?.uid },
      type,
      reason,
      message,
    });
  } catch (err) {
    // Never fail a reconcile over an event.
    deps.log.warn('could not record event', { reason, error: errorMessage(err) });
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
