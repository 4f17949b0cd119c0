/**
 * The scheduler and kubelet refuse what the real ones refuse (reference-node-side §2, §5
 * scenarios 1, 2, 13, 14, 15, 16, 19, 24, 25), on both lanes: on the real one kube-scheduler and
 * kube-apiserver answer, the kubelet is ours. Pods are made by hand, correct and incorrect, as a
 * controller would make them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { REAL } from '../../support/lanes.ts';
import { ATTACHABLE_CLASS, boundClaim, cond, createPod, eventWith, eventsOf, KVM, launcherFor, makeVmi, NS, plainPod, podWhere, runningPod, startStrictSandbox, type Sandbox } from './strict-support.ts';
import type { clients } from './helpers.ts';

const VOLUME = 'disk0';
const pvcVolume = (claim: string) => [{ name: VOLUME, persistentVolumeClaim: { claimName: claim } }];

describe('strict kubelet and scheduler (reference-node-side §2, §5)', () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  before(async () => {
    ({ sb, api } = await startStrictSandbox());
  });
  after(async () => sb?.stop());

  const containerCreating = (p: { status?: { phase?: string; containerStatuses?: { state?: { waiting?: object } }[] } }) =>
    p.status?.phase === 'Pending' && (p.status.containerStatuses?.[0]?.state?.waiting as { reason?: string } | undefined)?.reason === 'ContainerCreating';

  const modeMismatches = [
    { scenario: 1, mode: 'Block' as const, use: 'volumeMounts', change: { mounts: [{ name: VOLUME, mountPath: '/var/run/kubevirt-private/vmi-disks/disk0' }] } },
    { scenario: 2, mode: 'Filesystem' as const, use: 'volumeDevices', change: { devices: [{ name: VOLUME, devicePath: '/dev/disk0' }] } },
  ];
  for (const c of modeMismatches) {
    test(`§5.${c.scenario}: a ${c.mode} claim in ${c.use} → Pending, ContainerCreating, FailedMount with the volume manager's text`, async () => {
      // arrange
      const claim = await boundClaim(api.core, `mode-${c.scenario}`, c.mode);
      const vmi = await makeVmi(api, `vmi-mode-${c.scenario}`, { domain: { devices: {} } });
      // act
      const name = await createPod(api.core, launcherFor(vmi, { volumes: pvcVolume(claim.metadata!.name!), ...c.change }));
      // assert
      const pod = await podWhere(api.core, name, 'ContainerCreating', containerCreating);
      const ev = await eventWith(api.core, name, 'FailedMount');
      assert.equal(ev.type, 'Warning');
      assert.equal(ev.component, 'kubelet');
      assert.equal(
        ev.message,
        `Unable to attach or mount volumes: unmounted volumes=[${VOLUME}], unattached volumes=[], failed to process volumes=[${VOLUME}]: volume ${VOLUME} has volumeMode ${c.mode}, but is specified in ${c.use}`,
      );
      assert.equal(cond(pod.status?.conditions, 'Ready')?.reason, 'ContainersNotReady');
    });
  }

  test('the same claim the right way round runs', async () => {
    // arrange
    const claim = await boundClaim(api.core, 'mode-ok', 'Block');
    const vmi = await makeVmi(api, 'vmi-mode-ok', { domain: { devices: {} } });
    // act
    const pod = await runningPod(api.core, launcherFor(vmi, { volumes: pvcVolume(claim.metadata!.name!), devices: [{ name: VOLUME, devicePath: '/dev/disk0' }] }));
    // assert
    assert.equal(pod.status?.phase, 'Running');
  });

  test('a claim that does not exist keeps the pod off every node (the scheduler\'s VolumeBinding)', async () => {
    // act
    const name = await createPod(api.core, plainPod('no-claim', { volumes: pvcVolume('absent') }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: VOLUME, mountPath: '/d' }] }]));
    // assert
    const pod = await podWhere(api.core, name, 'Unschedulable', (p) => cond(p.status?.conditions, 'PodScheduled')?.reason === 'Unschedulable');
    assert.equal(cond(pod.status?.conditions, 'PodScheduled')?.message, '0/4 nodes are available: persistentvolumeclaim "absent" not found. not found');
  });

  test('an unbound claim of no class (Immediate) keeps the pod off every node', async () => {
    // arrange
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: { metadata: { name: 'unbound-immediate' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } } });
    // act
    const name = await createPod(api.core, plainPod('immediate-user', { volumes: pvcVolume('unbound-immediate') }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: VOLUME, mountPath: '/d' }] }]));
    // assert
    const pod = await podWhere(api.core, name, 'Unschedulable', (p) => cond(p.status?.conditions, 'PodScheduled')?.reason === 'Unschedulable');
    assert.equal(cond(pod.status?.conditions, 'PodScheduled')?.message, '0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found');
  });

  test('a claim bound to a pod placed by nodeName but not bound yet → FailedMount "PVC is not bound"', async () => {
    // arrange: a claim of a class no provisioner serves stays Pending
    await api.core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: { metadata: { name: 'unbound' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'nobody', resources: { requests: { storage: '1Gi' } } } } });
    // act
    const name = await createPod(api.core, plainPod('unbound-user', { nodeName: 'node03', volumes: pvcVolume('unbound') }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: VOLUME, mountPath: '/d' }] }]));
    // assert
    await podWhere(api.core, name, 'ContainerCreating', containerCreating);
    const ev = await eventWith(api.core, name, 'FailedMount');
    assert.equal(ev.message, `Unable to attach or mount volumes: unmounted volumes=[${VOLUME}], unattached volumes=[], failed to process volumes=[${VOLUME}]: error processing PVC ${NS}/unbound: PVC is not bound`);
  });

  test('§5.16: a configMap volume whose ConfigMap is missing → ContainerCreating, FailedMount; creating it lets the pod run', async () => {
    // arrange
    const name = await createPod(api.core, plainPod('cm-user', { volumes: [{ name: 'cfg', configMap: { name: 'late-config' } }] }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }]));
    await podWhere(api.core, name, 'ContainerCreating', containerCreating);
    const ev = await eventWith(api.core, name, 'FailedMount');
    assert.equal(ev.message, 'MountVolume.SetUp failed for volume "cfg" : configmap "late-config" not found');
    // act
    await api.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'late-config' }, data: { a: 'b' } } });
    // assert
    await podWhere(api.core, name, 'Running', (p) => p.status?.phase === 'Running');
  });

  test('an optional or unmounted missing ConfigMap does not hold the pod', async () => {
    // act
    const pod = await runningPod(api.core, plainPod('cm-optional', { volumes: [{ name: 'opt', configMap: { name: 'nope', optional: true } }, { name: 'unused', configMap: { name: 'nope-either' } }] }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'opt', mountPath: '/o' }] }]));
    // assert
    assert.equal(pod.status?.phase, 'Running');
  });

  test('an attachable ReadWriteOnce claim in use on another node → FailedAttachVolume Multi-Attach; the pod starts once the first is gone', async () => {
    // arrange
    const claim = await boundClaim(api.core, 'rwo-shared', 'Filesystem', 'ReadWriteOnce', ATTACHABLE_CLASS);
    const pv = (claim as { spec?: { volumeName?: string } }).spec!.volumeName!;
    const user = (n: string, node: string) => plainPod(n, { nodeName: node, volumes: pvcVolume('rwo-shared') }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: VOLUME, mountPath: '/d' }] }]);
    const first = await runningPod(api.core, user('rwo-first', 'node03'));
    // act
    const second = await createPod(api.core, user('rwo-second', 'node04'));
    // assert
    await podWhere(api.core, second, 'ContainerCreating', containerCreating);
    const ev = await eventWith(api.core, second, 'FailedAttachVolume');
    assert.deepEqual([ev.type, ev.component, ev.message], ['Warning', 'attachdetach-controller', `Multi-Attach error for volume "${pv}" Volume is already used by pod(s) ${first.metadata!.name!}`]);
    await api.core.deleteNamespacedPod({ namespace: NS, name: first.metadata!.name!, body: { gracePeriodSeconds: 0 } });
    await podWhere(api.core, second, 'Running', (p) => p.status?.phase === 'Running');
  });

  test('§5.13: no node with allocatable kvm for the pod → Unschedulable with kube-scheduler\'s message', async () => {
    // arrange: the pod may only go to node02 (registered plugin, no healthy device) — by the hostname node01 lacks
    const vmi = await makeVmi(api, 'vmi-nokvm', { domain: { devices: {} } });
    // act
    const name = await createPod(api.core, launcherFor(vmi, { nodeSelector: { 'kubevirt.io/schedulable': 'true', 'kubernetes.io/hostname': 'node02' } }));
    // assert
    const pod = await podWhere(api.core, name, 'Unschedulable', (p) => cond(p.status?.conditions, 'PodScheduled')?.reason === 'Unschedulable');
    assert.equal(pod.status?.phase, 'Pending');
    assert.equal(
      cond(pod.status?.conditions, 'PodScheduled')?.message,
      `0/4 nodes are available: 1 Insufficient ${KVM}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.`,
    );
  });

  test('§5.14: bound by nodeName to a node whose kvm plugin has no healthy device → Failed, UnexpectedAdmissionError', async () => {
    // arrange
    const vmi = await makeVmi(api, 'vmi-admission', { domain: { devices: {} } });
    // act
    const name = await createPod(api.core, launcherFor(vmi, { nodeName: 'node02' }));
    // assert
    const pod = await podWhere(api.core, name, 'Failed', (p) => p.status?.phase === 'Failed');
    const status = pod.status as { reason?: string; message?: string };
    const text = `Allocate failed due to requested number of devices unavailable for ${KVM}. Requested: 1, Available: 0, which is unexpected`;
    assert.deepEqual([status.reason, status.message], ['UnexpectedAdmissionError', `Pod was rejected: ${text}`]);
    const ev = await eventWith(api.core, name, 'UnexpectedAdmissionError');
    assert.deepEqual([ev.type, ev.message], ['Warning', text]);
  });

  test('§5.14: bound by nodeName to a node with no kvm resource at all → admitted and running (without the device)', async () => {
    // arrange
    const vmi = await makeVmi(api, 'vmi-nokvm-node', { domain: { devices: {} } });
    // act
    const pod = await runningPod(api.core, launcherFor(vmi, { nodeName: 'node01' }));
    // assert
    assert.equal(pod.spec?.nodeName, 'node01');
  });

  test('a pod over the node\'s cpu, bound by nodeName → Failed, OutOfcpu', async () => {
    // act
    const name = await createPod(api.core, plainPod('too-big', { nodeName: 'node04' }, [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100' } } }]));
    // assert
    const pod = await podWhere(api.core, name, 'Failed', (p) => p.status?.phase === 'Failed');
    const status = pod.status as { reason?: string; message?: string };
    assert.equal(status.reason, 'OutOfcpu');
    assert.match(status.message ?? '', /^Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: \d+, capacity: 16000$/);
  });

  test('§5.15: a dedicated-CPU pod asking for kubevirt.io/cpumanager=true when no node has it → node affinity/selector', async () => {
    // arrange
    const vmi = await makeVmi(api, 'vmi-dedicated', { domain: { devices: {} } });
    // act
    const name = await createPod(api.core, launcherFor(vmi, { nodeSelector: { 'kubevirt.io/schedulable': 'true', 'kubevirt.io/cpumanager': 'true' } }));
    // assert
    const pod = await podWhere(api.core, name, 'Unschedulable', (p) => cond(p.status?.conditions, 'PodScheduled')?.reason === 'Unschedulable');
    assert.match(cond(pod.status?.conditions, 'PodScheduled')?.message ?? '', /^0\/4 nodes are available: 4 node\(s\) didn't match Pod's node affinity\/selector\. /);
  });

  test('§5.19: an attachment pod pinned by kubernetes.io/hostname to a node without that label stays Pending', async () => {
    // act
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node01'] }] }] } } };
    const name = await createPod(api.core, plainPod('hp-volume-pinned', { affinity }, [{ name: 'hotplug-disk', image: 'busybox' }]));
    // assert
    const pod = await podWhere(api.core, name, 'Unschedulable', (p) => cond(p.status?.conditions, 'PodScheduled')?.reason === 'Unschedulable');
    assert.match(cond(pod.status?.conditions, 'PodScheduled')?.message ?? '', /4 node\(s\) didn't match Pod's node affinity\/selector/);
  });

  test('§5.24: ready containers but no readiness-gate condition → Ready=False ReadinessGatesNotReady; the gate True → Ready', async () => {
    // arrange
    const vmi = await makeVmi(api, 'vmi-gate', { domain: { devices: {} } });
    const body = launcherFor(vmi);
    body.spec!.readinessGates = [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }];
    // act
    const pod = await runningPod(api.core, body);
    // assert
    assert.deepEqual(
      [cond(pod.status?.conditions, 'ContainersReady')?.status, cond(pod.status?.conditions, 'Ready')?.status, cond(pod.status?.conditions, 'Ready')?.reason, cond(pod.status?.conditions, 'Ready')?.message],
      ['True', 'False', 'ReadinessGatesNotReady', 'corresponding condition of pod readiness gate "kubevirt.io/virtual-machine-unpaused" does not exist.'],
    );
    await api.core.patchNamespacedPodStatus({ namespace: NS, name: pod.metadata!.name!, body: { status: { conditions: [...(pod.status?.conditions ?? []), { type: 'kubevirt.io/virtual-machine-unpaused', status: 'True', reason: 'NotPaused' }] } } }, (await import('./helpers.ts')).MERGE);
    await podWhere(api.core, pod.metadata!.name!, 'Ready', (p) => cond(p.status?.conditions, 'Ready')?.status === 'True');
  });

  test('§5.25: compute exits 0 while another container runs → pod Running, ContainersReady=False, "containers with unready status: [compute]"', async () => {
    // arrange
    const pod = await runningPod(api.core, plainPod('console-left', {}, [{ name: 'compute', image: 'launcher' }, { name: 'guest-console-log', image: 'launcher' }]));
    // act
    await sb.kubelet.exitContainer(NS, pod.metadata!.name!, 'compute', 0);
    // assert
    const after = await podWhere(api.core, pod.metadata!.name!, 'compute terminated', (p) => p.status?.containerStatuses?.find((c) => c.name === 'compute')?.state?.terminated !== undefined);
    assert.equal(after.status?.phase, 'Running');
    assert.deepEqual([cond(after.status?.conditions, 'ContainersReady')?.status, cond(after.status?.conditions, 'Ready')?.message], ['False', 'containers with unready status: [compute]']);
    // the last container ends: all exited 0 → Succeeded
    await sb.kubelet.exitContainer(NS, pod.metadata!.name!, 'guest-console-log', 0);
    await podWhere(api.core, pod.metadata!.name!, 'Succeeded', (p) => p.status?.phase === 'Succeeded');
  });

  test('§5.25: a RuntimeClass that does not exist → pod create Forbidden', { skip: REAL ? false : 'the emulator does not serve node.k8s.io RuntimeClasses (kube-apiserver\'s RuntimeClass admission is the real lane\'s)' }, async () => {
    // act
    const err = await createPod(api.core, plainPod('rc-missing', { runtimeClassName: 'kata-missing' })).then(() => undefined, (e: unknown) => e as { code?: number; body?: string });
    // assert
    assert.equal(err?.code, 403);
    const status = (typeof err?.body === 'string' ? JSON.parse(err.body) : err?.body) as { reason?: string; message?: string };
    assert.deepEqual([status.reason, status.message], ['Forbidden', 'pods "rc-missing" is forbidden: pod rejected: RuntimeClass "kata-missing" not found']);
  });

  test('a failed mount is re-reported, counted on one event', async () => {
    // arrange
    const name = await createPod(api.core, plainPod('cm-repeat', { volumes: [{ name: 'cfg', configMap: { name: 'never' } }] }, [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }] }]));
    // act + assert: the kubelet keeps retrying (with backoff) on the same event
    const ev = await (await import('./helpers.ts')).waitFor('FailedMount counted twice', async () => (await eventsOf(api.core, name)).find((e) => e.reason === 'FailedMount' && e.count >= 2), 30_000);
    assert.equal((await eventsOf(api.core, name)).filter((e) => e.reason === 'FailedMount').length, 1, 'one Event object, its count raised');
    assert.ok(ev.count >= 2);
  });
});
