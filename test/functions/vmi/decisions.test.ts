/**
 * The VMI controller's pure decisions, table-driven against reference.md §a.3 (sync) and §a.4
 * (status and write strategy).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { decideSync, guaranteeProblem, type Observed } from '../../../functions/vmi/sync.ts';
import { computeVmi } from '../../../functions/vmi/update-status.ts';
import { planVmiWrite } from '../../../functions/vmi/write-status.ts';
import { runningVmiStatus } from '../../../sandbox/nodes/vmi-running-status.ts';
import { isPodReady } from '../../../shared/predicates/pods.ts';

const NOW = '2026-11-29T10:00:00.000Z';
const IMAGE = 'quay.io/kubevirt/virt-launcher:v1.9.0';

function vmi(phase: string, extra: Partial<VirtualMachineInstance['metadata']> = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'a', namespace: 'ns', uid: 'vmi-uid', resourceVersion: '10', finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'], ...extra },
    spec: { domain: { devices: {} } },
    status: phase ? { phase } : {},
  };
}

function pod(phase: string, opts: { node?: string; compute?: 'running' | 'waiting' | 'terminated'; deleting?: boolean; scheduled?: false } = {}): V1Pod {
  const state = opts.compute === 'terminated' ? { terminated: { exitCode: 0 } } : opts.compute === 'waiting' ? { waiting: { reason: 'ContainerCreating' } } : { running: {} };
  return {
    metadata: {
      name: 'virt-launcher-a-xyz',
      namespace: 'ns',
      uid: 'pod-uid',
      creationTimestamp: new Date('2026-11-29T09:59:00Z'),
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'a', uid: 'vmi-uid', controller: true }],
      ...(opts.deleting ? { deletionTimestamp: new Date(NOW) } : {}),
    },
    spec: { nodeName: opts.node ?? 'node01', containers: [{ name: 'compute', image: IMAGE }] },
    status: {
      phase,
      containerStatuses: [{ name: 'compute', ready: true, restartCount: 0, image: IMAGE, imageID: '', state }],
      ...(opts.scheduled === false ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' }] } : {}),
    },
  };
}

/** A WFFC temporary pod (§4): the ephemeral-provisioning annotation, in `phase`. */
function tempPod(phase: string, opts: Parameters<typeof pod>[1] & { exitCode?: number } = {}): V1Pod {
  const p = pod(phase, opts);
  p.metadata!.name = 'virt-launcher-a-tmp';
  p.metadata!.annotations = { 'kubevirt.io/ephemeral-provisioning': 'true' };
  if (opts.exitCode !== undefined) p.status!.containerStatuses![0]!.state = { terminated: { exitCode: opts.exitCode } };
  return p;
}

function observed(v: VirtualMachineInstance, p?: V1Pod, volumes: Observed['volumes'] = { ready: true, wffc: false }): Observed {
  return { vmi: v, pods: p ? [p] : [], pod: p, volumes, migrations: [] };
}

describe('sync: what the VMI controller does to pods (§a.3)', () => {
  const cases: { name: string; o: Observed; want: string }[] = [
    { name: 'new VMI, no pod → create the launcher pod', o: observed(vmi('')), want: 'create-pod' },
    { name: 'Pending VMI, no pod → create', o: observed(vmi('Pending')), want: 'create-pod' },
    { name: 'Scheduling VMI whose pod vanished → never re-create', o: observed(vmi('Scheduling')), want: 'none' },
    { name: 'Running VMI, no pod → nothing (status fails it)', o: observed(vmi('Running')), want: 'none' },
    { name: 'volumes not ready → wait, no pod', o: observed(vmi('Pending'), undefined, { ready: false, wffc: false }), want: 'none' },
    { name: 'missing PVC → informal error, no pod', o: observed(vmi('Pending'), undefined, { ready: false, wffc: false, missingPvc: 'ns/disk' }), want: 'none' },
    { name: 'pod exists → nothing to do', o: observed(vmi('Scheduling'), pod('Pending')), want: 'none' },
    { name: 'VMI being deleted, pod alive → delete it', o: observed(vmi('Running', { deletionTimestamp: NOW }), pod('Running')), want: 'delete-pods' },
    { name: 'VMI being deleted, pod already terminating → leave it', o: observed(vmi('Running', { deletionTimestamp: NOW }), pod('Running', { deleting: true })), want: 'none' },
    { name: 'VMI being deleted, terminating but final pod → delete again', o: observed(vmi('Failed', { deletionTimestamp: NOW }), pod('Failed', { deleting: true })), want: 'delete-pods' },
    { name: 'final VMI keeps its pod', o: observed(vmi('Succeeded'), pod('Succeeded')), want: 'none' },
    { name: 'WFFC: a volume waits for its first consumer, no pod → create (the temporary pod)', o: observed(vmi('Pending'), undefined, { ready: true, wffc: true }), want: 'create-pod' },
    { name: 'WFFC: the temporary pod exists while the volume still waits → nothing', o: observed(vmi('Pending'), tempPod('Succeeded'), { ready: true, wffc: true }), want: 'none' },
    { name: 'WFFC: bound now, the temporary pod Succeeded → delete it', o: observed(vmi('Pending'), tempPod('Succeeded'), { ready: false, wffc: false }), want: 'delete-temp-pods' },
    { name: 'WFFC: bound now, the temporary pod Running → delete it', o: observed(vmi('Pending'), tempPod('Running'), { ready: false, wffc: false }), want: 'delete-temp-pods' },
    { name: 'WFFC: a Pending temporary pod is never deleted', o: observed(vmi('Pending'), tempPod('Pending'), { ready: false, wffc: false }), want: 'none' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(decideSync(c.o).kind, c.want);
    });
  }

  test('WFFC: the create decision says which pod to render', () => {
    // arrange
    const o = observed(vmi('Pending'), undefined, { ready: true, wffc: true });
    // act
    const d = decideSync(o);
    // assert
    assert.deepEqual(d, { kind: 'create-pod', wffc: true });
  });

  test('a missing PVC is reported as FailedPvcNotFound, not retried with backoff', () => {
    const d = decideSync(observed(vmi('Pending'), undefined, { ready: false, wffc: false, missingPvc: 'ns/disk' }));
    assert.equal(d.kind, 'none');
    assert.deepEqual(d.kind === 'none' ? d.error : undefined, { reason: 'FailedPvcNotFound', message: 'PVC ns/disk does not exist, waiting for it to appear', requeue: false });
  });
});

describe('IsPodReady: the hand-off trigger', () => {
  const cases: [string, V1Pod, boolean][] = [
    ['Running with compute running', pod('Running'), true],
    ['Pending', pod('Pending'), false],
    ['Running but compute still waiting', pod('Running', { compute: 'waiting' }), false],
    ['compute terminated', pod('Running', { compute: 'terminated' }), false],
    ['being deleted', pod('Running', { deleting: true }), false],
  ];
  for (const [name, p, want] of cases) test(name, () => assert.equal(isPodReady(p), want));
});

describe('status: phase transitions (§a.4)', () => {
  const run = (o: Observed, syncError?: { reason: string; message: string; requeue: boolean }) =>
    computeVmi({ observed: o, syncError, now: NOW, launcherImage: IMAGE, ownerVmLive: true });

  const cases: { name: string; o: Observed; phase: string }[] = [
    { name: 'Pending + pod created → Scheduling', o: observed(vmi('Pending'), pod('Pending')), phase: 'Scheduling' },
    { name: 'new + no pod → Pending', o: observed(vmi('')), phase: 'Pending' },
    { name: 'Pending + deleted before a pod → Failed', o: observed(vmi('Pending', { deletionTimestamp: NOW })), phase: 'Failed' },
    { name: 'Pending + DataVolume failed → Failed', o: observed(vmi('Pending'), undefined, { ready: false, wffc: false, failedDataVolume: 'ns/dv' }), phase: 'Failed' },
    { name: 'Scheduling + pod ready → Scheduled (hand-off)', o: observed(vmi('Scheduling'), pod('Running')), phase: 'Scheduled' },
    { name: 'Scheduling + pod pending → stays Scheduling', o: observed(vmi('Scheduling'), pod('Pending', { compute: 'waiting' })), phase: 'Scheduling' },
    { name: 'Scheduling + pod gone → Failed', o: observed(vmi('Scheduling')), phase: 'Failed' },
    { name: 'Scheduling + pod failed → Failed', o: observed(vmi('Scheduling'), pod('Failed', { compute: 'terminated' })), phase: 'Failed' },
    { name: 'Scheduled + pod gone → Failed', o: observed(vmi('Scheduled')), phase: 'Failed' },
    { name: 'Running + pod gone → Failed', o: observed(vmi('Running')), phase: 'Failed' },
    { name: 'Running + pod → stays Running (handler owns it)', o: observed(vmi('Running'), pod('Running')), phase: 'Running' },
    { name: 'WFFC: a temporary pod is no launcher pod → stays Pending', o: observed(vmi('Pending'), tempPod('Running'), { ready: true, wffc: true }), phase: 'Pending' },
    { name: 'WFFC: the temporary pod Succeeded → stays Pending', o: observed(vmi('Pending'), tempPod('Succeeded', { compute: 'terminated' }), { ready: true, wffc: true }), phase: 'Pending' },
    { name: 'WFFC: the temporary pod Failed while the volume waits → Failed', o: observed(vmi('Pending'), tempPod('Failed', { exitCode: 1 }), { ready: true, wffc: true }), phase: 'Failed' },
    { name: 'WFFC: its compute container exited 1 while the volume waits → Failed', o: observed(vmi('Pending'), tempPod('Running', { exitCode: 1 }), { ready: true, wffc: true }), phase: 'Failed' },
    { name: 'WFFC: the temporary pod Failed after the volume bound → stays Pending', o: observed(vmi('Pending'), tempPod('Failed', { exitCode: 1 }), { ready: false, wffc: false }), phase: 'Pending' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(run(c.o).status?.phase, c.phase));

  test('the hand-off sets status.nodeName and the kubevirt.io/nodeName label from the pod', () => {
    const out = run(observed(vmi('Scheduling'), pod('Running', { node: 'node03' })));
    assert.equal(out.status?.nodeName, 'node03');
    assert.equal(out.metadata?.labels?.['kubevirt.io/nodeName'], 'node03');
    assert.deepEqual(out.status?.phaseTransitionTimestamps, [{ phase: 'Scheduled', phaseTransitionTimestamp: NOW }]);
  });

  test('an unschedulable pod is mirrored as PodScheduled=False on the VMI', () => {
    const out = run(observed(vmi('Scheduling'), pod('Pending', { compute: 'waiting', scheduled: false })));
    const cond = out.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'False');
    assert.equal(cond?.reason, 'Unschedulable');
  });

  test('WFFC: Provisioning=True added once, Ready=False PodNotExists, the temporary pod\'s PodScheduled=False mirrored', () => {
    // arrange
    const before = vmi('Pending');
    before.status = { phase: 'Pending', conditions: [{ type: 'kubevirt.io/provisioning', status: 'True', reason: '', message: '', lastProbeTime: null, lastTransitionTime: '2026-11-29T09:00:00Z' }] };
    // act
    const out = run(observed(before, tempPod('Pending', { scheduled: false }), { ready: true, wffc: true }));
    // assert
    const conds = out.status?.conditions ?? [];
    assert.equal(conds.find((c) => c.type === 'kubevirt.io/provisioning')?.lastTransitionTime, '2026-11-29T09:00:00Z', 'kept, not re-added');
    assert.deepEqual([conds.find((c) => c.type === 'Ready')?.status, conds.find((c) => c.type === 'Ready')?.reason], ['False', 'PodNotExists']);
    assert.deepEqual([conds.find((c) => c.type === 'PodScheduled')?.status, conds.find((c) => c.type === 'PodScheduled')?.reason], ['False', 'Unschedulable']);
  });

  test('a sync error becomes Synchronized=False with its reason; a missing PVC also PodScheduled=False/Unschedulable', () => {
    const out = run(observed(vmi('Pending')), { reason: 'FailedPvcNotFound', message: 'PVC ns/disk does not exist, waiting for it to appear', requeue: false });
    assert.equal(out.status?.conditions?.find((c) => c.type === 'Synchronized')?.reason, 'FailedPvcNotFound');
    assert.equal(out.status?.conditions?.find((c) => c.type === 'PodScheduled')?.reason, 'Unschedulable');
  });

  test('a final VMI without pods loses its finalizer; the VM finalizer only when no live VM owns it', () => {
    const v = vmi('Failed', { finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine', 'kubevirt.io/virtualMachineControllerFinalize'] });
    const withVm = computeVmi({ observed: observed(v), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    const noVm = computeVmi({ observed: observed(v), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: false });
    assert.deepEqual(withVm.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
    assert.deepEqual(noVm.metadata?.finalizers, []);
  });

  test('the legacy finalizer name is migrated', () => {
    const out = run(observed(vmi('Pending', { finalizers: ['foregroundDeleteVirtualMachine'] })));
    assert.deepEqual(out.metadata?.finalizers, ['kubevirt.io/foregroundDeleteVirtualMachine']);
  });

  test('the input VMI is never mutated', () => {
    const v = vmi('Scheduling');
    const before = structuredClone(v);
    run(observed(v, pod('Running')));
    assert.deepEqual(v, before);
  });
});

describe('write strategy', () => {
  test('controller-owned phases: one full update carrying status, labels and the observed-API-version annotations', () => {
    const original = vmi('Pending');
    const desired = computeVmi({ observed: observed(original, pod('Pending')), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    const w = planVmiWrite(original, desired);
    assert.equal(w.kind, 'update');
    assert.equal(w.kind === 'update' ? w.vmi.metadata?.annotations?.['kubevirt.io/latest-observed-api-version'] : '', 'v1');
  });

  test('handler-owned phases: a JSON patch guarded by test ops, on the allowed fields only', () => {
    const original = vmi('Running');
    original.status!.conditions = [{ type: 'Ready', status: 'True', reason: '', message: '' }];
    const desired = computeVmi({ observed: observed(original), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    const w = planVmiWrite(original, desired);
    assert.equal(w.kind, 'patch');
    const ops = w.kind === 'patch' ? w.ops : [];
    assert.ok(ops.some((o) => o.op === 'test' && o.path === '/status/phase' && o.value === 'Running'), JSON.stringify(ops));
    assert.ok(ops.some((o) => o.op === 'replace' && o.path === '/status/phase' && o.value === 'Failed'));
    assert.ok(ops.every((o) => /^\/(status\/(volumeStatus|conditions|activePods|phase|launcherContainerImageVersion|interfaces)|metadata\/(labels|finalizers))$/.test(o.path)), JSON.stringify(ops));
  });

  test('after virt-handler\'s Running write: a Ready copied from the pod without a reason is the one this controller computes — no patch', () => {
    // arrange: the hand-off, then virt-handler's write (the sandbox's, which copies the pod's Ready as is)
    const ready = pod('Running');
    ready.status!.conditions = [{ type: 'Ready', status: 'True', lastProbeTime: null as unknown as undefined, lastTransitionTime: new Date('2026-11-29T09:59:30Z') }];
    const scheduled = computeVmi({ observed: observed(vmi('Scheduling'), ready), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    const handlerPod = JSON.parse(JSON.stringify(ready)) as Parameters<typeof runningVmiStatus>[1];
    const running = { ...scheduled, status: { ...scheduled.status, ...runningVmiStatus(scheduled as Parameters<typeof runningVmiStatus>[0], handlerPod, '2026-11-29T09:59:31Z') } } as VirtualMachineInstance;
    // act
    const next = computeVmi({ observed: observed(running, ready), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    // assert
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.reason, undefined, 'virt-handler wrote no reason');
    assert.deepEqual(planVmiWrite(running, next), { kind: 'none' });
  });

  test('nothing changed → no write at all', () => {
    const original = computeVmi({ observed: observed(vmi('Scheduling'), pod('Pending', { compute: 'waiting' })), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    const again = computeVmi({ observed: observed(original, pod('Pending', { compute: 'waiting' })), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
    assert.equal(planVmiWrite(original, again).kind, 'none');
  });
});

describe('status: hotplug conditions in Running (reference-vm-vmi-depth §5)', () => {
  const withSpec = (domain: Record<string, unknown>, status: Record<string, unknown>): VirtualMachineInstance => {
    const v = vmi('Running');
    return { ...v, spec: { domain: { devices: {}, ...domain } }, status: { ...v.status, ...status } } as VirtualMachineInstance;
  };
  const cases: { name: string; vmi: VirtualMachineInstance; ratio?: number; conditions: string[]; label?: string }[] = [
    { name: 'sockets above the current topology → HotVCPUChange=True', vmi: withSpec({ cpu: { sockets: 2, maxSockets: 4 } }, { currentCPUTopology: { sockets: 1, cores: 1, threads: 1 } }), conditions: ['HotVCPUChange=True'] },
    { name: 'no maxSockets → nothing', vmi: withSpec({ cpu: { sockets: 2 } }, { currentCPUTopology: { sockets: 1 } }), conditions: [] },
    { name: 'an existing HotVCPUChange is kept as it is', vmi: withSpec({ cpu: { sockets: 2, maxSockets: 4 } }, { currentCPUTopology: { sockets: 1 }, conditions: [{ type: 'HotVCPUChange', status: 'False', reason: 'x' }] }), conditions: ['HotVCPUChange=False'] },
    { name: 'guest above guestRequested → HotMemoryChange=True and the overhead-ratio label', vmi: withSpec({ memory: { guest: '4Gi', maxGuest: '8Gi' } }, { memory: { guestRequested: '2Gi' } }), ratio: 1.5, conditions: ['HotMemoryChange=True'], label: '1.5' },
    { name: 'guest equal → nothing', vmi: withSpec({ memory: { guest: '2Gi', maxGuest: '8Gi' } }, { memory: { guestRequested: '2Gi' } }), conditions: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const out = computeVmi({ observed: observed(c.vmi, pod('Running')), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true, memoryOverheadRatio: c.ratio });
      // assert
      const hot = (out.status?.conditions ?? []).filter((x) => x.type.startsWith('Hot')).map((x) => `${x.type}=${x.status}`);
      assert.deepEqual(hot, c.conditions);
      assert.equal(out.metadata?.labels?.['kubevirt.io/memory-hotplug-overhead-ratio'], c.label);
      for (const x of (out.status?.conditions ?? []).filter((y) => y.type.startsWith('Hot') && y.reason !== 'x')) assert.equal(x.reason, undefined, 'no reason (omitempty: no field)');
    });
  }
});

describe('status: VolumesChange in Running (reference-vm-vmi-depth §7, volume migration)', () => {
  /** A Running VMI whose `data` volume is on `claim`, with `migratedVolumes` from `src` to `dst`. */
  const migrating = (claim: string, migrated: { src: string; dst: string }[], conditions: { type: string; status: string; reason?: string }[] = []): VirtualMachineInstance => {
    const v = vmi('Running');
    return {
      ...v,
      spec: { domain: { devices: {} }, volumes: [{ name: 'root', containerDisk: { image: 'cirros' } }, { name: 'data', persistentVolumeClaim: { claimName: claim } }] },
      status: { ...v.status, conditions, migratedVolumes: migrated.map((m) => ({ volumeName: 'data', sourcePVCInfo: { claimName: m.src }, destinationPVCInfo: { claimName: m.dst } })) },
    } as VirtualMachineInstance;
  };
  const cases: [string, VirtualMachineInstance, string | undefined][] = [
    ['migrated volumes recorded and the volume on the destination → VolumesChange=True "migrate volumes"', migrating('dst', [{ src: 'src', dst: 'dst' }]), 'True/migrate volumes'],
    ['the volume still on its source claim (the VM has not moved it yet) → nothing', migrating('src', [{ src: 'src', dst: 'dst' }]), undefined],
    ['no migrated volumes → nothing', migrating('dst', []), undefined],
    ['an existing VolumesChange (False, from the VM) is left as it is', migrating('dst', [{ src: 'src', dst: 'dst' }], [{ type: 'VolumesChange', status: 'False' }]), 'False/'],
  ];
  for (const [name, v, want] of cases) {
    test(name, () => {
      // act
      const out = computeVmi({ observed: observed(v, pod('Running')), syncError: undefined, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
      // assert
      const c = out.status?.conditions?.find((x) => x.type === 'VolumesChange');
      assert.equal(c ? `${c.status}/${c.message ?? ''}` : undefined, want);
      if (c?.status === 'True') assert.equal(c.reason, undefined, 'no reason (omitempty: no field)');
      // and it goes out in the handler-phase patch
      if (want === 'True/migrate volumes') assert.ok(JSON.stringify(planVmiWrite(v, out)).includes('migrate volumes'));
    });
  }
});

describe('dedicated CPUs need a Guaranteed launcher pod (reference-node-side §5.15, KubeVirt lifecycle.go updateStatus)', () => {
  const cases: { name: string; dedicated: boolean; qos: string; want: string | undefined; phase: string }[] = [
    { name: 'dedicated, Burstable: FailedGuaranteeResources, stays Scheduling', dedicated: true, qos: 'Burstable', want: 'FailedGuaranteeResources', phase: 'Scheduling' },
    { name: 'dedicated, Guaranteed: handed off', dedicated: true, qos: 'Guaranteed', want: undefined, phase: 'Scheduled' },
    { name: 'shared CPUs, Burstable: handed off', dedicated: false, qos: 'Burstable', want: undefined, phase: 'Scheduled' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const v = vmi('Scheduling');
      if (c.dedicated) v.spec.domain.cpu = { dedicatedCpuPlacement: true };
      const p = pod('Running');
      p.status!.qosClass = c.qos;
      const o = observed(v, p);
      // act
      const problem = guaranteeProblem(o);
      const out = computeVmi({ observed: o, syncError: problem, now: NOW, launcherImage: IMAGE, ownerVmLive: true });
      // assert
      assert.equal(problem?.reason, c.want);
      assert.equal(out.status?.phase, c.phase);
      if (c.want) assert.deepEqual([out.status?.conditions?.find((x) => x.type === 'Synchronized')?.reason, out.status?.conditions?.find((x) => x.type === 'Synchronized')?.message], ['FailedGuaranteeResources', 'failed to guarantee pod resources']);
    });
  }
});
