/**
 * The emulated Job controller's decisions (sandbox/nodes/job-controller.ts) and the
 * kubelet's claim-checking programs (pod-script.ts), table-driven: what a one-pod Job becomes as
 * its pod runs and ends, and which exit code `ls <path> || exit <n>` gets from the files the
 * sandbox keeps per claim.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClaimFiles } from '../../../sandbox/nodes/claim-files.ts';
import { nextJobStep, podForJob, type Job } from '../../../sandbox/nodes/job-controller.ts';
import type { Pod } from '../../../sandbox/nodes/objects.ts';
import { scriptExitCodes } from '../../../sandbox/nodes/pod-script.ts';

const NOW = Date.parse('2026-12-02T07:00:00Z');
const ISO = new Date(NOW).toISOString();
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

const job = (o: Partial<NonNullable<Job['spec']>> = {}, status: Job['status'] = {}): Job => ({
  metadata: { name: 'recover-m', namespace: 'default', uid: 'job-uid' },
  spec: {
    completions: 1,
    backoffLimit: 0,
    activeDeadlineSeconds: 30,
    ttlSecondsAfterFinished: 30,
    podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'container', operator: 'In', values: [42] } }] },
    template: { metadata: { labels: { 'job-name': 'recover-m' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'container' }] } },
    ...o,
  },
  status,
});
const pod = (phase: string, exitCode?: number): Pod => ({
  metadata: { name: 'recover-m-abcde', namespace: 'default' },
  status: { phase, ...(exitCode !== undefined ? { containerStatuses: [{ name: 'container', state: { terminated: { exitCode } } }] } : {}) },
});
const conditionTypes = (step: ReturnType<typeof nextJobStep>) =>
  step.kind === 'finish' ? ((step.status.conditions as { type: string; reason: string }[]).map((c) => `${c.type}/${c.reason}`)) : [];

describe('the Job controller (emulated)', () => {
  const cases: { name: string; job: Job; pods: Pod[]; kind: string; conditions?: string[] }[] = [
    { name: 'no pod yet → one pod', job: job(), pods: [], kind: 'create-pod' },
    { name: 'its pod running → wait (until the deadline)', job: job({}, { startTime: ago(5) }), pods: [pod('Running')], kind: 'none' },
    { name: 'its pod Succeeded → Complete', job: job({}, { startTime: ago(5) }), pods: [pod('Succeeded', 0)], kind: 'finish', conditions: ['SuccessCriteriaMet/CompletionsReached', 'Complete/CompletionsReached'] },
    { name: 'exit 42 matches the FailJob rule → Failed by PodFailurePolicy', job: job({}, { startTime: ago(5) }), pods: [pod('Failed', 42)], kind: 'finish', conditions: ['FailureTarget/PodFailurePolicy', 'Failed/PodFailurePolicy'] },
    { name: 'exit 1 past backoffLimit 0 → BackoffLimitExceeded', job: job({}, { startTime: ago(5) }), pods: [pod('Failed', 1)], kind: 'finish', conditions: ['FailureTarget/BackoffLimitExceeded', 'Failed/BackoffLimitExceeded'] },
    { name: 'exit 1 within the backoff limit → another pod', job: job({ backoffLimit: 2 }, { startTime: ago(5) }), pods: [pod('Failed', 1)], kind: 'create-pod' },
    { name: 'running past activeDeadlineSeconds → DeadlineExceeded', job: job({}, { startTime: ago(31) }), pods: [pod('Pending')], kind: 'finish', conditions: ['FailureTarget/DeadlineExceeded', 'Failed/DeadlineExceeded'] },
    { name: 'finished less than ttlSecondsAfterFinished ago → kept', job: job({}, { completionTime: ago(10), conditions: [{ type: 'Complete', status: 'True' }] }), pods: [], kind: 'none' },
    { name: 'finished ttlSecondsAfterFinished ago → deleted', job: job({}, { completionTime: ago(30), conditions: [{ type: 'Complete', status: 'True' }] }), pods: [], kind: 'delete-job' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const step = nextJobStep(c.job, c.pods, NOW, ISO);
      // assert
      assert.equal(step.kind, c.kind);
      if (c.conditions) assert.deepEqual(conditionTypes(step), c.conditions);
    });
  }

  test('the PodFailurePolicy message names the container, the pod, the code and the rule', () => {
    const step = nextJobStep(job({}, { startTime: ago(5) }), [pod('Failed', 42)], NOW, ISO);
    const failed = step.kind === 'finish' ? (step.status.conditions as { type: string; message: string }[]).find((c) => c.type === 'Failed') : undefined;
    assert.equal(failed?.message, 'Container container for pod default/recover-m-abcde failed with exit code 42 matching FailJob rule at index 0');
  });

  test('a pod from the template: `<job>-` names, the template labels, the Job as controller', () => {
    const p = podForJob(job()) as { metadata: { generateName: string; labels: Record<string, string>; ownerReferences: { kind: string; uid: string; controller: boolean }[] }; spec: { restartPolicy: string } };
    assert.equal(p.metadata.generateName, 'recover-m-');
    assert.deepEqual(p.metadata.labels, { 'job-name': 'recover-m' });
    assert.deepEqual(p.metadata.ownerReferences.map((r) => [r.kind, r.uid, r.controller]), [['Job', 'job-uid', true]]);
    assert.equal(p.spec.restartPolicy, 'Never');
  });
});

describe('the kubelet\'s claim-checking programs', () => {
  const checker = (args: string[], subPath?: string): Pod => ({
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers: [{ name: 'container', command: ['bash'], args, volumeMounts: [{ name: 'backend-storage', mountPath: '/meta', ...(subPath !== undefined ? { subPath } : {}) }] }],
      volumes: [{ name: 'backend-storage', persistentVolumeClaim: { claimName: 'src' } }],
    },
  });
  const files = new ClaimFiles();
  files.write('default', 'src', 'meta/migrated');
  const cases: { name: string; pod: Pod; want: [string, number][] | undefined }[] = [
    { name: 'the marker in the mounted sub-path → exit 0', pod: checker(['-c', 'ls /meta/migrated || exit 42'], 'meta'), want: [['container', 0]] },
    { name: 'no such file (no sub-path: the claim root) → the exit code asked for', pod: checker(['-c', 'ls /meta/migrated || exit 42']), want: [['container', 42]] },
    { name: 'a path outside every mount → the exit code', pod: checker(['-c', 'ls /other/migrated || exit 7'], 'meta'), want: [['container', 7]] },
    { name: 'any other program keeps running', pod: checker(['-c', 'sleep 3600'], 'meta'), want: undefined },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(scriptExitCodes(c.pod, files) ? [...scriptExitCodes(c.pod, files)!] : undefined, c.want);
    });
  }
});
