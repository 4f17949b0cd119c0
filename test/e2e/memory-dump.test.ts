/**
 * Memory dumps end to end (reference-vm-vmi-depth §7, issue 16): relay → queue → VM and VMI
 * functions → sandbox (attachment pod, virt-handler's dump), on both lanes. A user's
 * `status.memoryDumpRequest` (what virt-api's memorydump subresource writes for
 * `virtctl memory-dump get`) goes Associating → InProgress → Unmounting → Completed: the dump
 * volume hot-plugged into the running VMI, dumped, taken out again, the claim annotated with the
 * file name; then `remove: true` dissociates it (Dissociating → the request gone).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { IMMEDIATE_CLASS } from '../../infra/sandbox/storage/classes.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

const NAME = 'dumped';
const CLAIM = 'dump-claim';

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
    await s.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: CLAIM, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } } });
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
});
