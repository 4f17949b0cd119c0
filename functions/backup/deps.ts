/** What the backup reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';

export type BackupKube = Pick<KubeClient, 'get' | 'update' | 'patch' | 'delete' | 'createEvent'>;

/**
 * virt-api's subresources the backup controller calls: a VMI's `backup` (Start, Abort) and
 * `redefine-checkpoint`. A refusal throws, carrying the HTTP status as `code` where there was one.
 */
export interface BackupCommands {
  put(target: 'virtualmachineinstances', namespace: string, name: string, verb: 'backup' | 'redefine-checkpoint', body: unknown): Promise<void>;
}

export interface BackupDeps {
  readonly kube: BackupKube;
  readonly virtApi: BackupCommands;
  /** Epoch ms. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
}
