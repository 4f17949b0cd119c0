/**
 * Live updates end to end (reference-vm-vmi-depth §5, issue 16): relay → SQLite queue → VM, VMI,
 * workload-updater and migration functions → sandbox (scheduler, kubelet, virt-handler), on a
 * sped-up clock, on both lanes. The KubeVirt CR has the LiveUpdate rollout strategy,
 * `liveUpdateConfiguration.maxCpuSockets: 4` and `workloadUpdateMethods: [LiveMigrate]`.
 *
 * - Sockets raised on a running VM: the VM controller patches the VMI (sockets, CPU request), the
 *   VMI controller marks it `HotVCPUChange`, the workload updater creates a
 *   `kubevirt-workload-update-` migration with priority `user-triggered`, the target virt-handler
 *   applies the new topology and drops the condition, and the migration Succeeds.
 * - A change that needs a restart (cores) sets `RestartRequired` on the VM, and the VMI is left
 *   as it runs; a restart clears it and the new VMI has the new topology.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, VMIS, VMS } from '../../shared/api/resources.ts';
import { WORKLOAD_UPDATE_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

const SPEED = 10;
const NAME = 'live-1';

function liveVm(): VirtualMachine {
  const vm = vmManifest(NAME, { runStrategy: 'Always' });
  const domain = vm.spec.template.spec!.domain;
  domain.cpu = { sockets: 1, cores: 1, threads: 1 };
  domain.resources = { requests: { cpu: '100m', memory: '128Mi' } };
  return vm;
}

describe('live updates end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ speed: SPEED, nodes: 2, start: false });
    // Before the runtime starts: the controllers' cached cluster config reads it on first use.
    const configuration = { vmRolloutStrategy: 'LiveUpdate', liveUpdateConfiguration: { maxCpuSockets: 4 } };
    await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration, workloadUpdateStrategy: { workloadUpdateMethods: ['LiveMigrate'] } } } });
    s.rt.start();
  });
  after(async () => {
    await s.stop();
  });

  test('sockets raised on a running VM end as a completed user-triggered workload-update migration, the VMI on the new sockets', async () => {
    // arrange
    await s.kube.create(VMS, liveVm());
    await until('the VMI Running and migratable, with maxSockets 4', async () => {
      const vmi = await s.kube.get(VMIS, NS, NAME);
      return vmi?.status?.phase === 'Running' && vmi.spec.domain.cpu?.maxSockets === 4 && !!vmi.status.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True');
    }, { problems: s.problems });
    const source = (await s.kube.get(VMIS, NS, NAME))?.status?.nodeName;
    const uid = (await s.kube.get(VMIS, NS, NAME))?.metadata?.uid;
    // act
    await s.kube.patch(VMS, NS, NAME, { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/domain/cpu/sockets', value: 2 }] });
    await until('a workload-update migration Succeeded and the VMI on 2 sockets without HotVCPUChange', async () => {
      const vmi = await s.kube.get(VMIS, NS, NAME);
      const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === NAME);
      return (
        migrations.some((m) => m.status?.phase === 'Succeeded') &&
        vmi?.status?.currentCPUTopology?.sockets === 2 &&
        !vmi.status.conditions?.some((c) => c.type === 'HotVCPUChange')
      );
    }, { problems: s.problems, tries: 6000 });
    // assert
    const vmi = await s.kube.get(VMIS, NS, NAME);
    const vm = await s.kube.get(VMS, NS, NAME);
    const migrations = (await s.kube.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === NAME);
    const audit = s.sandbox.apiServer.audit.query();
    const marked = audit.some((e) => e.resource === 'virtualmachineinstances' && e.name === NAME && ((e.object as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []).some((c) => c.type === 'HotVCPUChange' && c.status === 'True'));
    console.log(`hotplug: ${source} → ${vmi?.status?.nodeName}, migrations ${migrations.map((m) => `${m.metadata?.name} ${m.spec?.priority} ${m.status?.phase}`).join(', ')}`);
    assert.equal(vmi?.metadata?.uid, uid, 'the same VMI (no restart)');
    assert.equal(vmi?.spec.domain.cpu?.sockets, 2);
    assert.equal(vmi?.spec.domain.resources?.requests?.['cpu'], '200m', '100m more for the new vCPU (cpuAllocationRatio 10)');
    assert.ok(marked, 'the VMI controller marked it HotVCPUChange=True on the way');
    assert.equal(migrations.length, 1, 'one migration');
    const m = migrations[0]!;
    assert.ok(m.metadata?.name?.startsWith('kubevirt-workload-update-'), m.metadata?.name);
    assert.equal(m.metadata?.annotations?.[WORKLOAD_UPDATE_MIGRATION_ANNOTATION], '');
    assert.equal(m.spec?.priority, 'user-triggered');
    assert.notEqual(vmi?.status?.nodeName, source, 'the domain moved to the target node');
    assert.equal(vm?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'no restart needed');
  });

  test('a change that needs a restart (cores) sets RestartRequired on the VM and leaves the VMI; a restart clears it', async () => {
    // arrange
    const before = await s.kube.get(VMIS, NS, NAME);
    // act
    await s.kube.patch(VMS, NS, NAME, { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/domain/cpu/cores', value: 2 }] });
    await until('RestartRequired on the VM', async () => (await s.kube.get(VMS, NS, NAME))?.status?.conditions?.some((c) => c.type === 'RestartRequired' && c.status === 'True') ?? false, { problems: s.problems });
    const cond = (await s.kube.get(VMS, NS, NAME))?.status?.conditions?.find((c) => c.type === 'RestartRequired');
    const unchanged = await s.kube.get(VMIS, NS, NAME);
    // restart as virtctl asks for it: a Stop of this VMI, then a Start
    await s.kube.patch(VMS, NS, NAME, { type: 'merge', body: { status: { stateChangeRequests: [{ action: 'Stop', uid: before?.metadata?.uid }, { action: 'Start' }] } } }, { subresource: 'status' });
    await until('a new VMI Running with 2 cores, RestartRequired gone', async () => {
      const [vm, vmi] = await Promise.all([s.kube.get(VMS, NS, NAME), s.kube.get(VMIS, NS, NAME)]);
      return vmi?.metadata?.uid !== before?.metadata?.uid && vmi?.status?.phase === 'Running' && vmi.spec.domain.cpu?.cores === 2 && !vm?.status?.conditions?.some((c) => c.type === 'RestartRequired');
    }, { problems: s.problems, tries: 6000 });
    // assert
    assert.equal(cond?.message, 'a non-live-updatable field was changed in the template spec');
    assert.equal(cond?.reason ?? '', '', 'no reason');
    assert.equal(unchanged?.spec.domain.cpu?.cores, 1, 'the running VMI keeps its cores');
    assert.equal(unchanged?.metadata?.uid, before?.metadata?.uid);
    assert.deepEqual((await s.kube.get(VMIS, NS, NAME))?.spec.domain.cpu, { sockets: 2, cores: 2, threads: 1, maxSockets: 4, model: 'host-model' }, "the new topology; maxSockets and the CPU model from virt-api's VMI webhook");
  });
});
