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

/** The Ready condition as the kubelet derives it: containers ready and every readiness gate True. */
export function readyCondition(pod: Pod, conditions: Condition[], containersReady: boolean, nowIso: string): Condition {
  if (!containersReady) {
    return { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status', lastProbeTime: null, lastTransitionTime: nowIso };
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
