/**
 * Memory dumps end to end (reference-vm-vmi-depth §7, issue 16): relay → queue → VM and VMI
 * functions → sandbox (attachment pod, virt-handler's dump), on both lanes. A user's
 * `status.memoryDumpRequest` (what virt-api's memorydump subresource writes for
 * `virtctl memory-dump get`) goes Associating → InProgress → Unmounting → Completed: the dump
 * volume hot-plugged into the running VMI, dumped, taken out again, the claim annotated with the
 * file name; then `remove: true` dissociates it (Dissociating → the request gone). A dump that
 * fails in virt-handler (the sandbox's hook) ends Failed with its message, the claim annotated
 * "Memory dump failed" and the volume out of the VMI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import { FAIL_MEMORY_DUMP_ANNOTATION } from '../../sandbox/nodes/hotplug-volumes.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

const NAME = 'dumped';
const CLAIM = 'dump-claim';

function claim(name: string) {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } } };
}

describe('memory dump end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ storage: { provisionMs: 100 }, timings: { vmiHotplugMs: 50 } });
  });
  after(async () => {
    await s?.stop();
  });

  test('a dump request on a running VM: the volume plugged, dumped, unplugged, the claim annotated; remove dissociates it', async () => {
    // arrange
    await s.kube.create(PVCS, claim(CLAIM));
    await s.kube.create(VMS, vmManifest(NAME, { runStrategy: 'Always' }));
    await until('the claim bound and the VMI Running', async () => (await s.kube.get(PVCS, NS, CLAIM))?.status?.phase === 'Bound' && (await s.kube.get(VMIS, NS, NAME))?.status?.phase === 'Running', { problems: s.problems });
    const phases = new Set<string>();
    // act
    await s.kube.patch(VMS, NS, NAME, { type: 'merge', body: { status: { memoryDumpRequest: { claimName: CLAIM, phase: 'Associating' } } } }, { subresource: 'status' });
    await until('the dump Completed', async () => {
      const r = (await s.kube.get(VMS, NS, NAME))?.status?.memoryDumpRequest;
      if (r) phases.add(r.phase);
      return r?.phase === 'Completed';
    }, { problems: s.problems, tries: 6000 });
    const done = await s.kube.get(VMS, NS, NAME);
    const vmi = await s.kube.get(VMIS, NS, NAME);
    const pvc = await s.kube.get(PVCS, NS, CLAIM);
    await s.kube.patch(VMS, NS, NAME, { type: 'merge', body: { status: { memoryDumpRequest: { ...done!.status!.memoryDumpRequest!, remove: true } } } }, { subresource: 'status' });
    await until('the request dissociated', async () => (await s.kube.get(VMS, NS, NAME))?.status?.memoryDumpRequest === undefined, { problems: s.problems, tries: 6000 });
    const dissociated = await s.kube.get(VMS, NS, NAME);
    // assert
    const r = done!.status!.memoryDumpRequest!;
    console.log(`memory dump: phases seen ${[...phases].join(' → ')}, file ${r.fileName}`);
    assert.match(r.fileName ?? '', new RegExp(`^${NAME}-${CLAIM}-\\d{8}-\\d{6}\\.memory\\.dump$`));
    assert.ok(r.startTimestamp && r.endTimestamp, 'start and end copied from the VMI volume status');
    assert.equal(pvc?.metadata?.annotations?.['kubevirt.io/memory-dump'], r.fileName);
    assert.deepEqual(done?.spec.template.spec?.volumes?.find((v) => v.name === CLAIM), { name: CLAIM, memoryDump: { claimName: CLAIM, hotpluggable: true } }, 'the template keeps the dump volume');
    assert.equal(vmi?.spec.volumes?.some((v) => v.name === CLAIM), false, 'out of the VMI again');
    assert.equal(vmi?.status?.volumeStatus?.some((v) => v.name === CLAIM) ?? false, false);
    assert.equal(dissociated?.spec.template.spec?.volumes?.some((v) => v.name === CLAIM), false, 'dissociated: out of the template');
    assert.equal(done?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'the dump volume needs no restart');
  });

  test('a dump that fails in virt-handler: Failed with its message, the claim annotated, the volume out of the VMI', async () => {
    // arrange
    const name = 'dump-fails';
    const claimName = 'dump-fails-claim';
    await s.kube.create(PVCS, claim(claimName));
    await s.kube.create(VMS, vmManifest(name, { runStrategy: 'Always' }));
    await until('the claim bound and the VMI Running', async () => (await s.kube.get(PVCS, NS, claimName))?.status?.phase === 'Bound' && (await s.kube.get(VMIS, NS, name))?.status?.phase === 'Running', { problems: s.problems });
    await s.kube.patch(VMIS, NS, name, { type: 'merge', body: { metadata: { annotations: { [FAIL_MEMORY_DUMP_ANNOTATION]: 'no space left on device' } } } });
    // act
    await s.kube.patch(VMS, NS, name, { type: 'merge', body: { status: { memoryDumpRequest: { claimName, phase: 'Associating' } } } }, { subresource: 'status' });
    await until('the dump Failed and the volume out of the VMI', async () => {
      const vm = await s.kube.get(VMS, NS, name);
      const vmi = await s.kube.get(VMIS, NS, name);
      return vm?.status?.memoryDumpRequest?.phase === 'Failed' && vmi?.spec.volumes?.some((v) => v.name === claimName) === false;
    }, { problems: s.problems, tries: 6000 });
    await until('the claim annotated', async () => (await s.kube.get(PVCS, NS, claimName))?.metadata?.annotations?.['kubevirt.io/memory-dump'] !== undefined, { problems: s.problems });
    const vm = await s.kube.get(VMS, NS, name);
    const pvc = await s.kube.get(PVCS, NS, claimName);
    // assert
    const r = vm!.status!.memoryDumpRequest!;
    assert.equal(r.message, `Memory dump to pvc ${claimName} failed: no space left on device`);
    assert.ok(r.endTimestamp, 'the end time copied from the VMI volume status');
    assert.equal(r.fileName, undefined, 'a failed dump has no file');
    assert.equal(pvc?.metadata?.annotations?.['kubevirt.io/memory-dump'], 'Memory dump failed');
  });
});
