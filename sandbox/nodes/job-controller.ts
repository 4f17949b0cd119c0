/**
 * kube-controller-manager's Job controller (and its TTL-after-finished controller), as far as a
 * one-pod Job needs them, for the emulator lane; on the real control plane the real ones run. A
 * Job gets a pod from its template (`<job>-` + 5 characters, its template labels, the Job as
 * controller); the pod's end decides the Job: a container exit code matching a `FailJob` rule of
 * the pod failure policy fails it (`PodFailurePolicy`), more failed pods than `backoffLimit` fail
 * it (`BackoffLimitExceeded`, else a new pod), `activeDeadlineSeconds` past `startTime` fails it
 * (`DeadlineExceeded`, its pods deleted), `completions` succeeded pods complete it. Conditions as
 * the real controller writes them (`FailureTarget` then `Failed`; `SuccessCriteriaMet` then
 * `Complete`). A finished Job with `ttlSecondsAfterFinished` is deleted that long after
 * (background propagation: the garbage collector takes its pods). Not emulated: indexed Jobs,
 * parallelism above one pod at a time, suspend, pod-condition rules, `Ignore`/`Count` actions
 * (they count as a plain failure), the `batch.kubernetes.io/job-tracking` pod finalizer.
 */
import { BatchV1Api } from '@kubernetes/client-node';
import { pooledApiClient } from '../../shared/kube/connections.ts';
import type { Clock, ClockTimer } from '../clock.ts';
import { MERGE_PATCH, isNotFound, listAllPods, plain, statusCodeOf, type NodeSideApi } from './api.ts';
import { KeyWorker } from './key-worker.ts';
import { keyOf, splitKey, timeMs, type Condition, type KubeObject, type Pod } from './objects.ts';
import type { RawList } from './watched-cache.ts';
import type { Informer } from './shared-informers.ts';

const JOB_UID_LABEL = 'batch.kubernetes.io/controller-uid';

/** A Job as this controller reads it. */
export interface Job extends KubeObject {
  spec?: {
    completions?: number;
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
    ttlSecondsAfterFinished?: number;
    podFailurePolicy?: { rules?: { action: string; onExitCodes?: { containerName?: string; operator: string; values: number[] } }[] };
    template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
  };
  status?: { conditions?: Condition[]; startTime?: string; completionTime?: string; active?: number; succeeded?: number; failed?: number };
}

/** What the controller does next for one Job. */
export type JobStep =
  | { readonly kind: 'none'; readonly wakeAtMs?: number }
  | { readonly kind: 'create-pod'; readonly status: Record<string, unknown> }
  | { readonly kind: 'finish'; readonly status: Record<string, unknown>; readonly deletePods: readonly Pod[] }
  | { readonly kind: 'delete-job' };

const isFinal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** The job's finish condition, if it has one: `Complete` or `Failed` True. */
function finished(job: Job): Condition | undefined {
  return (job.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/** The first `FailJob` rule a failed pod's container exit code matches, as the real controller words it. */
function failJobMatch(job: Job, pod: Pod): string | undefined {
  const rules = job.spec?.podFailurePolicy?.rules ?? [];
  for (const status of pod.status?.containerStatuses ?? []) {
    const code = status.state?.terminated?.exitCode;
    if (code === undefined || code === 0) continue;
    for (const [i, r] of rules.entries()) {
      const on = r.onExitCodes;
      if (!on || (on.containerName && on.containerName !== status.name)) continue;
      const hit = on.operator === 'In' ? on.values.includes(code) : !on.values.includes(code);
      if (!hit) continue;
      if (r.action !== 'FailJob') break;
      return `Container ${status.name} for pod ${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''} failed with exit code ${code} matching FailJob rule at index ${i}`;
    }
  }
  return undefined;
}

/** The next step for `job` with its `pods` at `nowMs`; pure. */
export function nextJobStep(job: Job, pods: readonly Pod[], nowMs: number, nowIso: string): JobStep {
  if (job.metadata?.deletionTimestamp) return { kind: 'none' };
  const done = finished(job);
  if (done) {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    if (ttl === undefined) return { kind: 'none' };
    const at = (timeMs(job.status?.completionTime ?? done.lastTransitionTime) ?? nowMs) + ttl * 1000;
    return nowMs >= at ? { kind: 'delete-job' } : { kind: 'none', wakeAtMs: at };
  }
  const live = pods.filter((p) => !isFinal(p) && !p.metadata?.deletionTimestamp);
  const succeeded = pods.filter((p) => p.status?.phase === 'Succeeded').length;
  const failedPods = pods.filter((p) => p.status?.phase === 'Failed');
  const startTime = job.status?.startTime ?? nowIso;
  const counts = { startTime, active: live.length, succeeded, failed: failedPods.length };
  const cond = (type: string, reason: string, message: string): Condition => ({ type, status: 'True', reason, message, lastProbeTime: nowIso, lastTransitionTime: nowIso });
  const fail = (reason: string, message: string): JobStep => ({
    kind: 'finish',
    status: { ...counts, active: 0, conditions: [...(job.status?.conditions ?? []), cond('FailureTarget', reason, message), cond('Failed', reason, message)] },
    deletePods: live,
  });
  for (const p of failedPods) {
    const match = failJobMatch(job, p);
    if (match) return fail('PodFailurePolicy', match);
  }
  if (failedPods.length > (job.spec?.backoffLimit ?? 6)) return fail('BackoffLimitExceeded', 'Job has reached the specified backoff limit');
  const deadline = job.spec?.activeDeadlineSeconds;
  const deadlineAt = deadline !== undefined ? (timeMs(startTime) ?? nowMs) + deadline * 1000 : undefined;
  if (deadlineAt !== undefined && nowMs >= deadlineAt) return fail('DeadlineExceeded', 'Job was active longer than specified deadline');
  if (succeeded >= (job.spec?.completions ?? 1)) {
    const message = 'Reached expected number of succeeded pods';
    return {
      kind: 'finish',
      status: { ...counts, completionTime: nowIso, conditions: [...(job.status?.conditions ?? []), cond('SuccessCriteriaMet', 'CompletionsReached', message), cond('Complete', 'CompletionsReached', message)] },
      deletePods: [],
    };
  }
  if (live.length === 0) return { kind: 'create-pod', status: { ...counts, active: 1 } };
  return { kind: 'none', ...(deadlineAt !== undefined ? { wakeAtMs: deadlineAt } : {}) };
}

/** The pod the Job controller makes from the template (`GetPodFromTemplate`). */
export function podForJob(job: Job): Record<string, unknown> {
  const t = job.spec?.template ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${job.metadata?.name ?? ''}-`,
      namespace: job.metadata?.namespace,
      labels: { ...t.metadata?.labels },
      ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name, uid: job.metadata?.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: structuredClone(t.spec ?? {}),
  };
}

export interface JobControllerOptions {
  api: NodeSideApi;
  clock: Clock;
  onError?: (what: string, err: unknown) => void;
}

/** Runs the emulated Job controller until `stop()`. */
export async function startJobController(opts: JobControllerOptions): Promise<{ stop(): Promise<void> }> {
  const { api, clock } = opts;
  const batch = pooledApiClient(api.kc, BatchV1Api);
  const timers = new Map<string, ClockTimer>();
  /** Pods created and not yet seen by the pod informer, by Job UID. */
  const created = new Map<string, string>();
  const jobs: Informer<Job> = api.informers.informer<Job>({
    path: '/apis/batch/v1/jobs',
    list: async () => plain<RawList<Job>>(await batch.listJobForAllNamespaces({})),
    onError: (e) => opts.onError?.('job controller job informer', e),
    onEvent: (_e, job) => worker.add(keyOf(job)),
  });
  const pods: Informer<Pod> = api.informers.informer<Pod>({
    path: '/api/v1/pods',
    labelSelector: JOB_UID_LABEL,
    list: listAllPods(api, JOB_UID_LABEL),
    onError: (e) => opts.onError?.('job controller pod informer', e),
    indexes: { job: (p) => [p.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'Job')?.uid ?? ''] },
    onEvent: (_e, pod) => {
      const ref = pod.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'Job');
      if (ref?.name) worker.add(`${pod.metadata?.namespace ?? ''}/${ref.name}`);
    },
  });

  const handle = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const job = jobs.get(namespace, name);
    clock.clearTimeout(timers.get(key));
    timers.delete(key);
    if (!job) return;
    const uid = job.metadata?.uid ?? '';
    const own = pods.byIndex('job', uid);
    // Our own create that the pod informer has not shown yet: the pod exists, do not make another.
    const made = created.get(uid);
    if (made && !own.some((p) => p.metadata?.name === made)) return;
    created.delete(uid);
    const step = nextJobStep(job, own, clock.nowMs(), clock.isoNow());
    const patchStatus = (status: Record<string, unknown>) =>
      batch.patchNamespacedJobStatus({ namespace, name, body: { metadata: { resourceVersion: job.metadata?.resourceVersion }, status } }, MERGE_PATCH);
    switch (step.kind) {
      case 'none':
        if (step.wakeAtMs !== undefined) timers.set(key, clock.setTimeout(() => worker.add(key), step.wakeAtMs - clock.nowMs()));
        return;
      case 'create-pod': {
        await patchStatus(step.status);
        const pod = plain<Pod>(await api.core.createNamespacedPod({ namespace, body: podForJob(job) as never }));
        created.set(uid, pod.metadata?.name ?? '');
        return;
      }
      case 'finish':
        for (const p of step.deletePods) {
          try {
            await api.core.deleteNamespacedPod({ namespace, name: p.metadata?.name ?? '' });
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        }
        await patchStatus(step.status);
        return;
      case 'delete-job':
        try {
          await batch.deleteNamespacedJob({ namespace, name, body: { propagationPolicy: 'Background', preconditions: { uid: job.metadata?.uid } } });
        } catch (err) {
          if (!isNotFound(err) && statusCodeOf(err) !== 409) throw err;
        }
    }
  };

  const worker = new KeyWorker(handle, { concurrency: 2, onError: (k, e) => opts.onError?.(`job controller ${k}`, e) });
  await pods.start();
  await jobs.start();
  return {
    async stop() {
      await worker.stop();
      for (const t of timers.values()) clock.clearTimeout(t);
      timers.clear();
      await Promise.all([jobs.stop(), pods.stop()]);
    },
  };
}
