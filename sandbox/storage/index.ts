/**
 * The storage side of the sandbox cluster (reference-snapshot-export-backup.md §6), in one call:
 * CSI snapshotter, volume provisioner/binder, CDI, the export server processes, virt-handler's
 * backup work, the CAs virt-operator publishes, the default storage classes, and the virt-api
 * subresources (freeze/unfreeze, backup, redefine-checkpoint, VM stop) the storage controllers
 * call. Everything talks to the cluster through the Kubernetes API only.
 */
import type { NodeSideApi } from '../nodes/api.ts';
import type { Clock } from '../clock.ts';
import { startVirtApi, type VirtApi } from '../virt-api/server.ts';
import { startBackupAgent, type BackupAgent } from './backup-agent.ts';
import { startCdi, type Cdi } from './cdi.ts';
import { createSandboxStorageClasses } from './classes.ts';
import { startCsiSnapshotter, type CsiSnapshotter } from './csi-snapshotter.ts';
import { startExportServer, type ExportServer } from './export-server.ts';
import { publishOperatorCas } from './operator-cas.ts';
import { startPvProvisioner, type PvProvisioner } from './pv-provisioner.ts';

/** Simulated durations (ms on the sandbox clock) and switches. */
export interface StorageAgentsOptions {
  snapshotCreateMs?: number;
  snapshotReadyMs?: number;
  provisionMs?: number;
  importMs?: number;
  backupStepMs?: number;
  /** Bind claims to volumes (false where kube-controller-manager's PV controller does it). Default true. */
  bindVolumes?: boolean;
  /** Create the default StorageClasses and VolumeSnapshotClass; default true. */
  storageClasses?: boolean;
}

export interface StorageAgents {
  snapshotter: CsiSnapshotter;
  provisioner: PvProvisioner;
  cdi: Cdi;
  exportServer: ExportServer;
  backup: BackupAgent;
  virtApi: VirtApi;
  stop(): Promise<void>;
}

export async function startStorageAgents(
  base: { api: NodeSideApi; clock: Clock; onError?: (what: string, err: unknown) => void },
  opts: StorageAgentsOptions = {},
): Promise<StorageAgents> {
  const { api, clock } = base;
  const onError = base.onError ? { onError: base.onError } : {};
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const c of started.splice(0).reverse()) await c.stop();
  };
  try {
    await publishOperatorCas(api);
    if (opts.storageClasses !== false) await createSandboxStorageClasses(api, (what) => base.onError?.(what, undefined));
    const snapshotter = await startCsiSnapshotter({ api, clock, ...onError, ...(opts.snapshotCreateMs !== undefined ? { createMs: opts.snapshotCreateMs } : {}), ...(opts.snapshotReadyMs !== undefined ? { readyMs: opts.snapshotReadyMs } : {}) });
    started.push(snapshotter);
    const provisioner = await startPvProvisioner({ api, clock, ...onError, ...(opts.provisionMs !== undefined ? { provisionMs: opts.provisionMs } : {}), ...(opts.bindVolumes !== undefined ? { bind: opts.bindVolumes } : {}) });
    started.push(provisioner);
    const cdi = await startCdi({ api, clock, ...onError, ...(opts.importMs !== undefined ? { importMs: opts.importMs } : {}) });
    started.push(cdi);
    const exportServer = await startExportServer({ api, clock, ...onError });
    started.push(exportServer);
    const backup = await startBackupAgent({ api, clock, ...onError, ...(opts.backupStepMs !== undefined ? { stepMs: opts.backupStepMs } : {}) });
    started.push(backup);
    const virtApi = await startVirtApi({ api, clock, backup, ...onError });
    started.push(virtApi);
    return { snapshotter, provisioner, cdi, exportServer, backup, virtApi, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
