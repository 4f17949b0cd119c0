/**
 * The pod statuses a kubelet writes, as pure functions: started (Running, containers running and
 * ready, IPs, Ready honouring readiness gates) and finished (Succeeded/Failed, containers
 * terminated). Image IDs carry a stable sha256 digest, because KubeVirt pins a migration target's
 * containerDisk images to the digests in the source pod's container statuses (reference §b.8).
 */
import { createHash } from 'node:crypto';
import { conditionOf, withCondition, type Condition, type Container, type Pod } from './objects.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** `repo@sha256:<digest>` for an image reference; stable for the same reference. */
export function imageIdOf(image: string | undefined): string {
  const ref = image ?? 'unknown';
  if (ref.includes('@sha256:')) return ref;
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.indexOf(':', lastSlash + 1);
  const repo = colon < 0 ? ref : ref.slice(0, colon);
  return `${repo}@sha256:${sha(ref)}`;
}

/** `containers with unready status: [a b]` (Kubernetes `pkg/kubelet/status/generate.go`). */
export function unreadyMessage(names: readonly string[]): string {
  return `containers with unready status: [${names.join(' ')}]`;
}

/**
 * The Ready condition as the kubelet derives it (`GeneratePodReadyCondition`): containers ready
 * (`unready` lists the ones that are not; `true` = all ready) and every readiness gate True.
 */
export function readyCondition(pod: Pod, conditions: Condition[], containersReady: boolean | readonly string[], nowIso: string): Condition {
  const unready = containersReady === true ? [] : containersReady === false ? (pod.spec?.containers ?? []).map((c) => c.name) : containersReady;
  if (unready.length > 0) {
    return { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: unreadyMessage(unready), lastProbeTime: null, lastTransitionTime: nowIso };
  }
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditionOf(conditions, gate.conditionType);
    if (c?.status !== 'True') {
      const message = c
        ? `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`
        : `corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`;
      return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message, lastProbeTime: null, lastTransitionTime: nowIso };
    }
  }
  return { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: nowIso };
}

function runningContainer(podUid: string, c: Container, nowIso: string) {
  return {
    name: c.name,
    image: c.image,
    imageID: imageIdOf(c.image),
    containerID: `containerd://${sha(`${podUid}/${c.name}`)}`,
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: nowIso } },
    lastState: {},
  };
}

function terminatedContainer(podUid: string, c: Container, exitCode: number, reason: string, nowIso: string, startedAt?: string) {
  return {
    name: c.name,
    image: c.image,
    imageID: imageIdOf(c.image),
    containerID: `containerd://${sha(`${podUid}/${c.name}`)}`,
    ready: false,
    started: false,
    restartCount: 0,
    state: { terminated: { exitCode, reason, startedAt: startedAt ?? nowIso, finishedAt: nowIso } },
    lastState: {},
  };
}

/** Status of a pod whose containers have just started on a node. */
export function runningStatus(pod: Pod, podIP: string, hostIP: string, nowIso: string): Record<string, unknown> {
  const uid = pod.metadata?.uid ?? '';
  let conds = pod.status?.conditions ?? [];
  const t = (type: string): Condition => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: nowIso });
  for (const type of ['PodReadyToStartContainers', 'Initialized', 'ContainersReady']) conds = withCondition(conds, t(type));
  conds = withCondition(conds, readyCondition(pod, conds, true, nowIso));
  return {
    phase: 'Running',
    conditions: conds,
    hostIP,
    hostIPs: [{ ip: hostIP }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: nowIso,
    initContainerStatuses: (pod.spec?.initContainers ?? []).map((c) => terminatedContainer(uid, c, 0, 'Completed', nowIso)),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => runningContainer(uid, c, nowIso)),
  };
}

/**
 * Status of a pod whose containers all exited (`Succeeded` = exit 0, `Failed` = exit 1).
 * `exitCodes` (by container name) overrides the code of the containers it names.
 */
export function finishedStatus(pod: Pod, phase: 'Succeeded' | 'Failed', reason: string, nowIso: string, exitCodes?: ReadonlyMap<string, number>): Record<string, unknown> {
  const uid = pod.metadata?.uid ?? '';
  const defaultCode = phase === 'Succeeded' ? 0 : 1;
  const started = (pod.status as { startTime?: string } | undefined)?.startTime;
  let conds = pod.status?.conditions ?? [];
  const f = (type: string): Condition => ({ type, status: 'False', reason: 'PodCompleted', lastProbeTime: null, lastTransitionTime: nowIso });
  for (const type of ['Ready', 'ContainersReady', 'PodReadyToStartContainers']) conds = withCondition(conds, f(type));
  return {
    phase,
    conditions: conds,
    containerStatuses: (pod.spec?.containers ?? []).map((c) => {
      const code = exitCodes?.get(c.name) ?? defaultCode;
      return terminatedContainer(uid, c, code, exitCodes ? (code === 0 ? 'Completed' : 'Error') : reason, nowIso, started);
    }),
  };
}

/** Status of a pod whose programs ran to completion with these exit codes: Succeeded when all are 0. */
export function exitedStatus(pod: Pod, exitCodes: ReadonlyMap<string, number>, nowIso: string): Record<string, unknown> {
  const failed = [...exitCodes.values()].some((c) => c !== 0);
  return finishedStatus(pod, failed ? 'Failed' : 'Succeeded', failed ? 'Error' : 'Completed', nowIso, exitCodes);
}

/**
 * Status of a bound pod whose sandbox or volumes are not ready: `Pending`, every container waiting
 * in `reason` (`ContainerCreating`), not ready (what `kubectl get pod` shows as ContainerCreating).
 */
export function waitingStatus(pod: Pod, hostIP: string, reason: string, nowIso: string): Record<string, unknown> {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  let conds = pod.status?.conditions ?? [];
  const cond = (type: string, status: string, extra: Partial<Condition> = {}): Condition => ({ type, status, lastProbeTime: null, lastTransitionTime: nowIso, ...extra });
  conds = withCondition(conds, cond('PodReadyToStartContainers', 'False'));
  conds = withCondition(conds, cond('Initialized', (pod.spec?.initContainers ?? []).length === 0 ? 'True' : 'False'));
  conds = withCondition(conds, cond('ContainersReady', 'False', { reason: 'ContainersNotReady', message: unreadyMessage(names) }));
  conds = withCondition(conds, readyCondition(pod, conds, names, nowIso));
  const waiting = (c: Container) => ({ name: c.name, image: c.image, imageID: '', ready: false, started: false, restartCount: 0, state: { waiting: { reason } }, lastState: {} });
  return {
    phase: 'Pending',
    conditions: conds,
    hostIP,
    hostIPs: [{ ip: hostIP }],
    startTime: (pod.status as { startTime?: string } | undefined)?.startTime ?? nowIso,
    ...((pod.spec?.initContainers ?? []).length > 0 ? { initContainerStatuses: (pod.spec?.initContainers ?? []).map(waiting) } : {}),
    containerStatuses: (pod.spec?.containers ?? []).map(waiting),
  };
}

/** A pod the kubelet refused to admit (`rejectPod`): `Failed`, its reason, "Pod was rejected: …". */
export function rejectedStatus(reason: string, message: string): Record<string, unknown> {
  return { phase: 'Failed', reason, message: `Pod was rejected: ${message}` };
}

/**
 * Status after one container of a running pod exited with `exitCode` (restartPolicy Never): it is
 * terminated and unready; the pod stays `Running` while another container runs, and ends
 * `Succeeded` (all exited 0) or `Failed` once none does (`getPhase`).
 */
export function containerExitedStatus(pod: Pod, container: string, exitCode: number, nowIso: string): Record<string, unknown> {
  const statuses = ((pod.status?.containerStatuses ?? []) as (Record<string, unknown> & { name: string; state?: Record<string, unknown> })[]).map((s) =>
    s.name === container
      ? { ...s, ready: false, started: false, state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: (s.state?.['running'] as { startedAt?: string } | undefined)?.startedAt ?? nowIso, finishedAt: nowIso } } }
      : s,
  );
  const running = statuses.filter((s) => s.state?.['running'] !== undefined);
  const unready = statuses.filter((s) => s['ready'] !== true).map((s) => s.name);
  let conds = pod.status?.conditions ?? [];
  if (running.length === 0) {
    const failed = statuses.some((s) => Number((s.state?.['terminated'] as { exitCode?: number } | undefined)?.exitCode ?? 0) !== 0);
    const f = (type: string): Condition => ({ type, status: 'False', reason: 'PodCompleted', lastProbeTime: null, lastTransitionTime: nowIso });
    for (const type of ['Ready', 'ContainersReady', 'PodReadyToStartContainers']) conds = withCondition(conds, f(type));
    return { phase: failed ? 'Failed' : 'Succeeded', conditions: conds, containerStatuses: statuses };
  }
  conds = withCondition(conds, { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: unreadyMessage(unready), lastProbeTime: null, lastTransitionTime: nowIso });
  conds = withCondition(conds, readyCondition(pod, conds, unready, nowIso));
  return { phase: 'Running', conditions: conds, containerStatuses: statuses };
}
