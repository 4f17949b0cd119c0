/**
 * The sandbox virt-handler's backup work (one loop for the cluster), driven by the `backup` and
 * `redefine-checkpoint` subresources (served by sandbox/virt-api/) and by VMI changes:
 * utility volumes attach and detach, and a started backup progresses asynchronously
 * ({@link nextBackupStep}). Changed-block tracking itself is virt-handler's (nodes/cbt-steps.ts):
 * the VM controller creates the VMI `Initializing`, the handler enables it. Every write is a merge patch
 * of the VMI with a resourceVersion precondition (VMIs have no /status subresource).
 */
import { KUBEVIRT, MERGE_PATCH, listAllVmis, type NodeSideApi } from '../nodes/api.ts';
import { agentWorker } from './agent-worker.ts';
import { keyOf, splitKey, type Vmi } from '../nodes/objects.ts';
import { WatchedCache } from '../nodes/watched-cache.ts';
import type { Clock } from '../clock.ts';
import { nextBackupStep, utilityVolumeStatus, type BackupRequest, type RunningBackup } from './backup-steps.ts';
import { StepDelays } from './delays.ts';

const VMIS = { ...KUBEVIRT, plural: 'virtualmachineinstances' } as const;

export interface BackupAgentOptions {
  api: NodeSideApi;
  clock: Clock;
  /** Simulated ms between backup steps and for a utility volume to attach; default 200. */
  stepMs?: number;
  onError?: (what: string, err: unknown) => void;
}

/** An answer for the subresource server: 2xx, or an HTTP error code and message. */
export type CommandAnswer = { code: number; message?: string };

export interface BackupAgent {
  /** `PUT …/virtualmachineinstances/<name>/backup`. */
  command(namespace: string, name: string, req: BackupRequest): Promise<CommandAnswer>;
  /** `PUT …/virtualmachineinstances/<name>/redefine-checkpoint`. */
  redefineCheckpoint(namespace: string, name: string): CommandAnswer;
  /** Test hook: the VMI's running (or next) backup fails with `message`. */
  failBackup(namespace: string, name: string, message: string): void;
  /** Test hook: redefine-checkpoint answers 422 for this VMI (the checkpoint is gone). */
  rejectCheckpoints(namespace: string, name: string, reject?: boolean): void;
  restarts(): number;
  stop(): Promise<void>;
}


export async function startBackupAgent(opts: BackupAgentOptions): Promise<BackupAgent> {
  const { api, clock } = opts;
  const stepMs = opts.stepMs ?? 200;
  const runs = new Map<string, RunningBackup>();
  const failures = new Map<string, string>();
  const rejected = new Set<string>();
  const delays = new StepDelays(clock, (key) => worker.add(key));

  const vmis: WatchedCache<Vmi> = new WatchedCache<Vmi>({
    kc: api.kc,
    path: '/apis/kubevirt.io/v1/virtualmachineinstances',
    list: listAllVmis(api),
    onError: (e) => opts.onError?.('backup-agent vmi informer', e),
    onEvent: (event, vmi) => {
      if (event === 'delete') {
        delays.forget(keyOf(vmi));
        runs.delete(keyOf(vmi));
      } else worker.add(keyOf(vmi));
    },
  });
  const patchStatus = async (vmi: Vmi, status: Record<string, unknown>) => {
    const { namespace = '', name = '', resourceVersion } = vmi.metadata ?? {};
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace, name, body: { metadata: { resourceVersion }, status } }, MERGE_PATCH);
  };

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const vmi = vmis.get(namespace, name) as Parameters<typeof utilityVolumeStatus>[0] | undefined;
    if (!vmi || vmi.status?.phase !== 'Running') return;
    const volumeStatus = utilityVolumeStatus(vmi);
    if (volumeStatus) {
      const attaching = volumeStatus.length > (vmi.status?.volumeStatus?.length ?? 0);
      if (!attaching || delays.due(key, 'attach', stepMs)) return patchStatus(vmi, { volumeStatus });
    }
    const run = runs.get(key);
    if (run) run.failure = failures.get(key);
    const step = nextBackupStep(vmi, run, clock.isoNow());
    if (!step || (step.delay && !delays.due(key, `${run?.request.backupName ?? ''}/${step.step}`, stepMs))) return;
    await patchStatus(vmi, { changedBlockTracking: { backupStatus: step.fields } });
    if (step.step !== 'progress') {
      runs.delete(key);
      failures.delete(key);
    }
  };

  const worker = agentWorker('backup-agent', handle, 2, opts.onError);
  await vmis.start();

  return {
    async command(namespace, name, req) {
      const key = `${namespace}/${name}`;
      const vmi = vmis.get(namespace, name) ?? ((await api.custom.getNamespacedCustomObject({ ...VMIS, namespace, name }).catch(() => undefined)) as Vmi | undefined);
      if (!vmi) return { code: 404, message: `virtualmachineinstance ${key} not found` };
      if (vmi.status?.phase !== 'Running') return { code: 409, message: `VMI ${key} is not running` };
      const run = runs.get(key);
      switch (req.cmd) {
        case 'Start':
          if (run && run.request.backupName !== req.backupName) return { code: 409, message: `backup ${run.request.backupName} is already in progress` };
          runs.set(key, { request: req, abort: false, failure: undefined });
          break;
        case 'Abort':
          if (run) run.abort = true;
          break;
        case 'Export':
          if (run) run.request = { ...run.request, exportServerAddr: req.exportServerAddr ?? '' };
          break;
        default:
          return { code: 400, message: `unknown backup command ${req.cmd}` };
      }
      worker.add(key);
      return { code: 200 };
    },
    redefineCheckpoint(namespace, name) {
      if (rejected.has(`${namespace}/${name}`)) return { code: 422, message: 'Unprocessable Entity: checkpoint cannot be redefined, its bitmap is gone' };
      return { code: 200 };
    },
    failBackup(namespace, name, message) {
      failures.set(`${namespace}/${name}`, message);
      worker.add(`${namespace}/${name}`);
    },
    rejectCheckpoints(namespace, name, reject = true) {
      if (reject) rejected.add(`${namespace}/${name}`);
      else rejected.delete(`${namespace}/${name}`);
    },
    restarts: () => vmis.restarts,
    async stop() {
      await worker.stop();
      delays.stop();
      await vmis.stop();
    },
  };
}
