/**
 * Instance types and preferences end to end: the sandbox cluster, the local runtime (relay → queue
 * → VM and VMI functions → sandbox) and the real kubectl. `kubectl create` of a cluster instance
 * type, a cluster preference and two VMs: one runs with the expanded spec (CPU and memory from the
 * instance type, device preferences from the preference) and pinned revisions; the other sets the
 * CPU the instance type also sets, and gets its Failure condition and event, and no VMI. Then the
 * running VM's matcher is pointed at an instance type with dedicated CPUs (`kubectl patch`): the
 * start revision pinned the old one, so the VM gets `RestartRequired` and the VMI runs on.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, CONTROLLER_REVISIONS, EVENTS, VMIS, VMS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { KUBECTL, runKubectl, type KubectlResult } from '../kubectl/support.ts';
import { launcherPods, newRuntime, NS, until } from './support.ts';

let sandbox: Sandbox;
let rt: LocalRuntime;
let kube: KubeClient;
let dir: string;
const problems: string[] = [];

function kubectl(args: string[], stdin?: string): Promise<KubectlResult> {
  return runKubectl({ kubeconfig: sandbox.kubeconfigPath, dir }, args, stdin);
}

/** What a user writes: the way KubeVirt's docs and `virtctl create vm --instancetype … --preference …` do. */
const MANIFESTS = `
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: e2e.small
spec:
  cpu:
    guest: 2
  memory:
    guest: 256Mi
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  name: e2e.cirros
spec:
  devices:
    preferredDiskBus: sata
    preferredInterfaceModel: e1000
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: e2e-it
  namespace: ${NS}
spec:
  runStrategy: Always
  instancetype:
    name: e2e.small
  preference:
    name: e2e.cirros
  template:
    spec:
      domain:
        devices:
          disks:
          - name: containerdisk
            disk: {}
      volumes:
      - name: containerdisk
        containerDisk:
          image: quay.io/kubevirt/cirros-container-disk-demo:v1.9.0
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: e2e-it-conflict
  namespace: ${NS}
spec:
  runStrategy: Always
  instancetype:
    name: e2e.small
  template:
    spec:
      domain:
        cpu:
          sockets: 4
        devices:
          disks:
          - name: containerdisk
            disk: {}
      volumes:
      - name: containerdisk
        containerDisk:
          image: quay.io/kubevirt/cirros-container-disk-demo:v1.9.0
`;

describe('instance types and preferences end to end (relay → queue → functions → sandbox, driven by kubectl)', { skip: KUBECTL ? false : 'no kubectl on this machine' }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vr-it-e2e-'));
    sandbox = await startSandbox({ nodes: 1, kubeconfigOut: join(dir, 'kubeconfig'), timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50 } });
    rt = newRuntime(sandbox, problems);
    rt.start();
    kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
    const created = await kubectl(['create', '-f', '-'], MANIFESTS);
    assert.equal(created.code, 0, created.stderr);
  });
  after(async () => {
    await rt?.stop();
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the VM runs with the expanded spec and pinned revisions', async () => {
    // arrange: created in before()
    // act
    await until('e2e-it Running', async () => (await kube.get(VMIS, NS, 'e2e-it'))?.status?.phase === 'Running', { tries: 6000, problems });
    // assert
    const vm = await kube.get(VMS, NS, 'e2e-it');
    const it = await kube.get(CLUSTER_INSTANCETYPES, undefined, 'e2e.small');
    const pref = await kube.get(CLUSTER_PREFERENCES, undefined, 'e2e.cirros');
    const itRev = `e2e-it-e2e.small-v1beta1-${it?.metadata?.uid}-${it?.metadata?.generation}`;
    const prefRev = `e2e-it-e2e.cirros-v1beta1-${pref?.metadata?.uid}-${pref?.metadata?.generation}`;
    assert.deepEqual(vm?.status?.instancetypeRef, { name: 'e2e.small', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: itRev } });
    assert.deepEqual(vm?.status?.preferenceRef, { name: 'e2e.cirros', kind: 'VirtualMachineClusterPreference', controllerRevisionRef: { name: prefRev } });
    for (const [name, kind, object] of [[itRev, 'VirtualMachineClusterInstancetype', it], [prefRev, 'VirtualMachineClusterPreference', pref]] as const) {
      const cr = await kube.get(CONTROLLER_REVISIONS, NS, name);
      assert.ok(cr, `ControllerRevision ${name}`);
      assert.deepEqual(cr.metadata?.labels, {
        'instancetype.kubevirt.io/object-generation': String(object?.metadata?.generation),
        'instancetype.kubevirt.io/object-kind': kind,
        'instancetype.kubevirt.io/object-name': object?.metadata?.name,
        'instancetype.kubevirt.io/object-uid': object?.metadata?.uid,
        'instancetype.kubevirt.io/object-version': 'v1beta1',
      });
      assert.equal(cr.metadata?.ownerReferences?.[0]?.uid, vm?.metadata?.uid);
      assert.deepEqual((cr.data as { spec?: unknown }).spec, object?.spec);
    }
    const vmi = await kube.get(VMIS, NS, 'e2e-it');
    assert.deepEqual(vmi?.spec.domain.cpu, { sockets: 2, cores: 1, threads: 1, maxSockets: 8, model: 'host-model' }, "the instance type: 2 vCPUs as sockets (maxSockets: 2 × KubeVirt's default maxHotplugRatio 4, and the CPU model: virt-api's VMI webhook)");
    assert.equal(vmi?.spec.domain.memory?.guest, '256Mi');
    assert.deepEqual(vmi?.spec.domain.devices.disks, [{ name: 'containerdisk', disk: { bus: 'sata' } }], 'the preferred disk bus');
    assert.equal(vmi?.spec.domain.devices.interfaces?.[0]?.model, 'e1000', 'the preferred interface model, on the default pod interface');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-instancetype-name'], 'e2e.small');
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/cluster-preference-name'], 'e2e.cirros');
    assert.equal((await launcherPods(kube, vmi?.metadata?.uid ?? '')).length, 1);
    const get = await kubectl(['get', 'vm', 'e2e-it', '-o', 'jsonpath={.status.printableStatus}']);
    assert.equal(get.stdout, 'Running');
  });

  test('the running VM switched to an instance type with dedicated CPUs: RestartRequired, the VMI untouched', async () => {
    // arrange
    await until('e2e-it Running', async () => (await kube.get(VMIS, NS, 'e2e-it'))?.status?.phase === 'Running', { tries: 6000, problems });
    const before = await kube.get(VMIS, NS, 'e2e-it');
    const dedicated = 'apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata:\n  name: e2e.dedicated\nspec:\n  cpu:\n    guest: 2\n    dedicatedCPUPlacement: true\n  memory:\n    guest: 256Mi\n';
    const created = await kubectl(['create', '-f', '-'], dedicated);
    assert.equal(created.code, 0, created.stderr);
    // act
    const patched = await kubectl(['patch', 'vm', 'e2e-it', '-n', NS, '--type=json', '-p', '[{"op":"replace","path":"/spec/instancetype/name","value":"e2e.dedicated"}]']);
    assert.equal(patched.code, 0, patched.stderr);
    await until('RestartRequired on e2e-it', async () => (await kube.get(VMS, NS, 'e2e-it'))?.status?.conditions?.some((c) => c.type === 'RestartRequired' && c.status === 'True') === true, { tries: 6000, problems });
    // assert
    const vm = await kube.get(VMS, NS, 'e2e-it');
    const start = await kube.get(CONTROLLER_REVISIONS, NS, before?.status?.virtualMachineRevisionName ?? '');
    const it = await kube.get(CLUSTER_INSTANCETYPES, undefined, 'e2e.small');
    assert.equal((start?.data as { spec: { instancetype?: { revisionName?: string } } }).spec.instancetype?.revisionName, `e2e-it-e2e.small-v1beta1-${it?.metadata?.uid}-${it?.metadata?.generation}`, 'the start revision pins the old instance type');
    assert.equal(vm?.status?.instancetypeRef?.name, 'e2e.dedicated', 'the status ref follows the matcher');
    assert.equal(vm?.status?.conditions?.find((c) => c.type === 'RestartRequired')?.message, 'a non-live-updatable field was changed in the template spec');
    const vmi = await kube.get(VMIS, NS, 'e2e-it');
    assert.equal(vmi?.metadata?.uid, before?.metadata?.uid, 'the same VMI');
    assert.equal(vmi?.spec.domain.cpu?.dedicatedCpuPlacement, undefined);
  });

  test('the conflicting VM gets its Failure condition and event, and no VMI', async () => {
    // arrange
    const message = 'error encountered while storing instancetype.kubevirt.io controllerRevisions: VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type';
    // act
    await until('the Failure condition', async () => (await kube.get(VMS, NS, 'e2e-it-conflict'))?.status?.conditions?.some((c) => c.type === 'Failure') === true, { tries: 6000, problems });
    // assert
    const failure = (await kube.get(VMS, NS, 'e2e-it-conflict'))?.status?.conditions?.find((c) => c.type === 'Failure');
    assert.deepEqual([failure?.status, failure?.reason, failure?.message], ['True', 'FailedCreate', message]);
    const events = (await kube.list(EVENTS, NS)).items as Array<{ involvedObject?: { name?: string }; reason?: string; type?: string; message?: string }>;
    assert.ok(
      events.some((e) => e.involvedObject?.name === 'e2e-it-conflict' && e.type === 'Warning' && e.reason === 'FailedCreate' && e.message === message),
      `no FailedCreate event: ${JSON.stringify(events.filter((e) => e.involvedObject?.name === 'e2e-it-conflict'))}`,
    );
    assert.equal(await kube.get(VMIS, NS, 'e2e-it-conflict'), undefined);
    const revisions = (await kube.list(CONTROLLER_REVISIONS, NS)).items.filter((r) => r.metadata?.name?.startsWith('e2e-it-conflict-'));
    assert.deepEqual(revisions, [], 'nothing pinned for a conflicting VM');
  });
});
