/** The backup controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { BackupCommands, BackupDeps } from './deps.ts';
import { reconcileBackup } from './reconcile.ts';

export interface BackupControllerOptions {
  readonly virtApi: BackupCommands;
  readonly log: Logger;
  readonly now?: () => number;
}

export function backupController(opts: BackupControllerOptions): ControllerSpec<BackupDeps> {
  return {
    controller: 'backup',
    reconcile: reconcileBackup,
    deps: (kube: KubeClient) => ({ kube, virtApi: opts.virtApi, now: opts.now ?? Date.now, log: opts.log }),
  };
}
