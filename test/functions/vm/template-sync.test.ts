/**
 * What the VM reconcile writes back into the VM template (reference-vm-vmi-depth §7), against the
 * sandbox API server with virt-api's create mutators: the firmware UUID synchroniser (the UUIDv5 of
 * the VM name, test + add on the firmware, after the start; `FirmwareUUIDError`; a running VMI that
 * already has the UUID needs no restart) and the PCI topology annotations copied from the VMI.
 *
 * virt-api's VM webhook gives every new VM a firmware UUID and (for a PCIe template) the PCI
 * topology version annotation at CREATE only, so the synchronisers only ever write for a VM whose
 * template lost them in an update (or that predates the webhook): the tests remove them by a JSON
 * patch after the create, as such an update would.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import { legacyFirmwareUuid } from '../../../shared/api/firmware-uuid.ts';
import { LATEST_OBSERVED_API_VERSION_ANNOTATION, STORAGE_OBSERVED_API_VERSION_ANNOTATION, VM_CONTROLLER_FINALIZER } from '../../../shared/api/well-known.ts';
import { CONTROLLER_REVISIONS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { VmKube } from '../../../functions/vm/deps.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { startRevision, vmiFromVm } from '../../../functions/vm/vmi-from-vm.ts';
import { CONTROLLER, harness, NS, objectActions, reconcileUntilSettled, vmManifest, type Harness, startKubevirtApiServer } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startKubevirtApiServer();
});
after(async () => {
  await server.close();
});
/** The VM JSON patches the controller sent (spec, not status), by VM name: what went on the wire. */
let sent: { name: string; ops: unknown }[];

beforeEach(() => {
  const base = harness(server);
  const kube = base.deps.kube;
  sent = [];
  const recording: VmKube = {
    get: kube.get.bind(kube),
    create: kube.create.bind(kube),
    delete: kube.delete.bind(kube),
    createEvent: kube.createEvent.bind(kube),
    patch: (res, namespace, name, patch, options) => {
      if (res === VMS && !options?.subresource && patch.type === 'json') sent.push({ name, ops: patch.ops });
      return kube.patch(res, namespace, name, patch, options);
    },
  };
  h = { ...base, deps: { ...base.deps, kube: recording } };
  server.audit.clear();
  server.faults.clear();
});

/** A VM whose metadata this controller already wrote (finalizer, observed API versions): its first pass starts at the sync. */
function adopted(name: string, spec: Partial<VirtualMachine['spec']>): VirtualMachine {
  const vm = vmManifest(name, spec, [VM_CONTROLLER_FINALIZER]);
  vm.metadata = { ...vm.metadata, annotations: { [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' } };
  return vm;
}

/** Creates `vm`, then removes what virt-api's VM webhook added at `paths` by an update (the webhook does not run on update). */
async function createThenRemove(vm: VirtualMachine, paths: string[]): Promise<VirtualMachine> {
  await h.kube.create(VMS, vm);
  return h.kube.patch(VMS, NS, vm.metadata?.name ?? '', { type: 'json', ops: paths.map((path) => ({ op: 'remove' as const, path })) });
}

const UUID_PATH = '/spec/template/spec/domain/firmware/uuid';
const RUNNING = { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2026-03-01T12:00:00Z' }], conditions: [{ type: 'Ready', status: 'True' }] };

/** The JSON patches of `name`'s spec and metadata the controller sent. */
function vmPatchBodies(name: string): unknown[] {
  return sent.filter((p) => p.name === name).map((p) => p.ops);
}

describe('VM reconcile: the firmware UUID synchroniser', () => {
  test('a new VM has the webhook\'s UUID: the synchroniser writes nothing, the VMI starts from generation 1 with that UUID', async () => {
    // arrange
    await h.kube.create(VMS, adopted('fw-0', { runStrategy: 'Always' }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-0`);
    // assert
    const vm = await h.kube.get(VMS, NS, 'fw-0');
    assert.deepEqual(vmPatchBodies('fw-0'), [], 'no VM spec patch');
    assert.equal(vm?.metadata?.generation, 1);
    assert.notEqual(vm?.spec.template.spec?.domain.firmware?.uuid, legacyFirmwareUuid('fw-0'), 'a random UUID, not the UUIDv5');
    assert.equal((await h.kube.get(VMIS, NS, 'fw-0'))?.spec.domain.firmware?.uuid, vm?.spec.template.spec?.domain.firmware?.uuid);
  });

  test('a template without a UUID starts first (the VMI gets the UUIDv5 of the VM name); the next pass writes it into the template, the firmware it had kept; no restart', async () => {
    // arrange
    const vm = adopted('fw-1', { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.firmware = { serial: 'serial-1' };
    await createThenRemove(vm, [UUID_PATH]);
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-1`);
    // assert
    const got = await h.kube.get(VMS, NS, 'fw-1');
    const uuid = legacyFirmwareUuid('fw-1');
    assert.equal(uuid, '74c6e717-8d50-525f-a719-5e0e9b4530f4', 'UUIDv5 of the name in namespace 6a1a24a1-4061-4607-8bf4-a3963d0c5895 (Python uuid.uuid5 agrees)');
    assert.deepEqual(got?.spec.template.spec?.domain.firmware, { serial: 'serial-1', uuid });
    assert.deepEqual(objectActions(server), [
      `create controllerrevisions revision-start-vm-${got?.metadata?.uid ?? ''}-2`,
      'create virtualmachineinstances fw-1',
      'patch virtualmachines/status fw-1',
      'patch virtualmachines fw-1', // the next pass: the synchroniser, once the VMI is seen
      'patch virtualmachines/status fw-1',
    ]);
    assert.deepEqual(vmPatchBodies('fw-1'), [[
      { op: 'test', path: '/spec/template/spec/domain/firmware', value: { serial: 'serial-1' } },
      { op: 'add', path: '/spec/template/spec/domain/firmware', value: { serial: 'serial-1', uuid } },
    ]]);
    const vmi = await h.kube.get(VMIS, NS, 'fw-1');
    assert.equal(vmi?.spec.domain.firmware?.uuid, uuid, 'the VMI has the same UUID');
    const revision = await h.kube.get(CONTROLLER_REVISIONS, NS, vmi?.status?.virtualMachineRevisionName ?? '');
    assert.equal((revision?.data as { spec: VirtualMachine['spec'] }).spec.template.spec?.domain.firmware?.uuid, undefined, 'the start revision is the template as started: without it');
    assert.equal(got?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, "the VMI's UUID equals the template's: neutralised");
    assert.equal(vmi?.metadata?.annotations?.['kubevirt.io/vm-generation'], '2', 'the templates differ (the UUID): the annotation is not moved to the new generation');
  });

  test('a template with no firmware at all: test null + add; a stopped VM gets it too', async () => {
    // arrange
    await createThenRemove(adopted('fw-2', { runStrategy: 'Halted' }), ['/spec/template/spec/domain/firmware']);
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-2`);
    // assert
    const uuid = legacyFirmwareUuid('fw-2');
    assert.deepEqual(vmPatchBodies('fw-2'), [[
      { op: 'test', path: '/spec/template/spec/domain/firmware', value: null },
      { op: 'add', path: '/spec/template/spec/domain/firmware', value: { uuid } },
    ]]);
    assert.deepEqual((await h.kube.get(VMS, NS, 'fw-2'))?.spec.template.spec?.domain.firmware, { uuid });
  });

  test('a UUID of its own (or one written before) is left alone: no VM patch', async () => {
    // arrange
    const vm = adopted('fw-3', { runStrategy: 'Halted' });
    vm.spec.template.spec!.domain.firmware = { uuid: '11111111-2222-3333-4444-555555555555' };
    await h.kube.create(VMS, vm);
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-3`);
    // assert
    assert.deepEqual(objectActions(server), ['patch virtualmachines/status fw-3']);
    assert.equal((await h.kube.get(VMS, NS, 'fw-3'))?.spec.template.spec?.domain.firmware?.uuid, '11111111-2222-3333-4444-555555555555');
  });

  test('an empty UUID counts as none (an update blanks it; at create the webhook replaces it): the VMI and the template get the UUIDv5', async () => {
    // arrange
    const created = await h.kube.create(VMS, { ...adopted('fw-4', { runStrategy: 'Always' }) });
    await h.kube.patch(VMS, NS, 'fw-4', { type: 'json', ops: [{ op: 'replace', path: UUID_PATH, value: '' }] });
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-4`);
    // assert
    const uuid = legacyFirmwareUuid('fw-4');
    assert.match(created.spec.template.spec?.domain.firmware?.uuid ?? '', /^[0-9a-f-]{36}$/, 'the webhook gave the created VM a UUID');
    assert.equal((await h.kube.get(VMS, NS, 'fw-4'))?.spec.template.spec?.domain.firmware?.uuid, uuid);
    assert.equal((await h.kube.get(VMIS, NS, 'fw-4'))?.spec.domain.firmware?.uuid, uuid);
  });

  test('a failed patch: Failure FirmwareUUIDError, retried; nothing after it that pass (no PCI topology write); the next pass writes it', async () => {
    // arrange: started from a template without a UUID; virt-handler annotated the VMI with a PCI topology version
    await createThenRemove(adopted('fw-5', { runStrategy: 'Always' }), [UUID_PATH, '/spec/template/metadata/annotations/kubevirt.io~1pci-topology-version']);
    await reconcileVm(`${NS}/fw-5`, h.deps);
    const vmi = await h.kube.get(VMIS, NS, 'fw-5');
    await h.kube.patch(VMIS, NS, 'fw-5', { type: 'merge', body: { metadata: { annotations: { ...vmi?.metadata?.annotations, 'kubevirt.io/pci-topology-version': 'v3' } } } });
    server.faults.failNext(500, 1, { verb: 'patch', resource: 'virtualmachines', identity: CONTROLLER });
    sent = [];
    // act
    const first = await reconcileVm(`${NS}/fw-5`, h.deps).then(() => undefined, (err: Error) => err);
    const failed = (await h.kube.get(VMS, NS, 'fw-5'))?.status?.conditions?.find((c) => c.type === 'Failure');
    const patchesOnFailure = vmPatchBodies('fw-5').length;
    await reconcileUntilSettled(server, h, `${NS}/fw-5`);
    // assert
    assert.ok(first instanceof Error, 'a requeued sync error: retried with backoff');
    assert.equal(failed?.reason, 'FirmwareUUIDError');
    assert.match(failed?.message ?? '', /^error encountered when trying to patch VM firmware: ./);
    assert.equal(patchesOnFailure, 1, 'the failure ends the sync: the PCI topology annotation is not copied that pass');
    const vm = await h.kube.get(VMS, NS, 'fw-5');
    assert.equal(vm?.spec.template.spec?.domain.firmware?.uuid, legacyFirmwareUuid('fw-5'));
    assert.equal(vm?.spec.template.metadata?.annotations?.['kubevirt.io/pci-topology-version'], 'v3', 'copied on the next pass');
    assert.equal((await h.kube.get(VMIS, NS, 'fw-5'))?.metadata?.uid, vmi?.metadata?.uid, 'the same VMI');
    assert.equal(vm?.status?.conditions?.find((c) => c.type === 'Failure'), undefined, 'the Failure clears');
  });

  test('a VMI started before the write (a VM from before this controller wrote UUIDs) has that UUID already: no RestartRequired; another UUID needs a restart', async () => {
    // arrange: the VM, its start revision and its running VMI as an earlier controller left them (no UUID in the template)
    const vm = await createThenRemove(adopted('fw-6', { runStrategy: 'Always' }), [UUID_PATH]);
    await h.kube.create(CONTROLLER_REVISIONS, startRevision(vm));
    const vmi = await h.kube.create(VMIS, vmiFromVm(vm));
    await h.kube.patch(VMIS, NS, 'fw-6', { type: 'merge', body: { status: RUNNING } });
    // act
    await reconcileUntilSettled(server, h, `${NS}/fw-6`);
    const written = await h.kube.get(VMS, NS, 'fw-6');
    await h.kube.patch(VMS, NS, 'fw-6', { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/domain/firmware/uuid', value: '11111111-2222-3333-4444-555555555555' }] });
    await reconcileUntilSettled(server, h, `${NS}/fw-6`);
    const changed = await h.kube.get(VMS, NS, 'fw-6');
    // assert
    assert.equal(vmi.spec.domain.firmware?.uuid, legacyFirmwareUuid('fw-6'));
    assert.equal(written?.spec.template.spec?.domain.firmware?.uuid, legacyFirmwareUuid('fw-6'));
    assert.equal(written?.metadata?.generation, 3, 'created 1, the UUID removed 2, written 3');
    assert.equal(written?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, "the VMI's UUID equals the template's: neutralised");
    assert.equal((await h.kube.get(VMIS, NS, 'fw-6'))?.metadata?.uid, vmi.metadata?.uid, 'the same VMI');
    assert.equal(changed?.status?.conditions?.find((c) => c.type === 'RestartRequired')?.message, 'a non-live-updatable field was changed in the template spec');
  });
});

describe('VM reconcile: PCI topology annotations', () => {
  const VERSION = 'kubevirt.io/pci-topology-version';
  const SLOTS = 'kubevirt.io/pci-interface-slot-count';

  /**
   * A running VM whose template lost the version virt-api's VM webhook gave it (`remove`: the
   * template path an update removed), and whose VMI virt-handler has annotated (played by the
   * test) before the pass after its start. `machine`: the template's machine type (one without
   * PCIe gets no version from either webhook).
   */
  async function annotatedRunning(name: string, annotations: Record<string, string>, opts: { template?: VirtualMachine['spec']['template']['metadata']; remove?: string; machine?: string } = {}): Promise<void> {
    const vm = adopted(name, { runStrategy: 'Always' });
    if (opts.template) vm.spec.template.metadata = opts.template;
    if (opts.machine) vm.spec.template.spec!.domain.machine = { type: opts.machine };
    if (opts.machine) await h.kube.create(VMS, vm);
    else await createThenRemove(vm, [opts.remove ?? '/spec/template/metadata/annotations/kubevirt.io~1pci-topology-version']);
    // The start pass only: the copy comes on the next pass (KubeVirt's synchronisers wait for the VMI to be seen).
    await reconcileVm(`${NS}/${name}`, h.deps);
    const vmi = await h.kube.get(VMIS, NS, name);
    await h.kube.patch(VMIS, NS, name, { type: 'merge', body: { metadata: { annotations: { ...vmi?.metadata?.annotations, ...annotations } }, status: RUNNING } });
    server.audit.clear();
    sent = [];
  }

  test('both copied into the template annotations, the others kept; once the template has a version, a new one on the VMI is not copied', async () => {
    // arrange
    await annotatedRunning('pci-1', { [VERSION]: 'v3', [SLOTS]: '4' });
    // act
    await reconcileUntilSettled(server, h, `${NS}/pci-1`);
    const copied = (await h.kube.get(VMS, NS, 'pci-1'))?.spec.template.metadata?.annotations;
    const vmi = await h.kube.get(VMIS, NS, 'pci-1');
    await h.kube.patch(VMIS, NS, 'pci-1', { type: 'merge', body: { metadata: { annotations: { ...vmi?.metadata?.annotations, [VERSION]: 'v4', [SLOTS]: '8' } } } });
    await reconcileUntilSettled(server, h, `${NS}/pci-1`);
    // assert
    assert.deepEqual(copied, { 'example.com/note': 'from-template', [VERSION]: 'v3', [SLOTS]: '4' });
    assert.deepEqual(vmPatchBodies('pci-1')[0], [
      { op: 'test', path: '/spec/template/metadata/annotations', value: { 'example.com/note': 'from-template' } },
      { op: 'replace', path: '/spec/template/metadata/annotations', value: copied },
    ]);
    assert.equal(vmPatchBodies('pci-1').length, 1, 'written once');
    assert.deepEqual((await h.kube.get(VMS, NS, 'pci-1'))?.spec.template.metadata?.annotations, copied, 'the template keeps its own version');
    assert.equal((await h.kube.get(VMS, NS, 'pci-1'))?.status?.conditions?.find((c) => c.type === 'RestartRequired'), undefined, 'template annotations need no restart');
  });

  test('the version alone when the VMI has no slot count; a template without annotations or metadata gets them added', async () => {
    // arrange
    await annotatedRunning('pci-2', { [VERSION]: 'v3' }, { template: { labels: { app: 'x' } }, remove: '/spec/template/metadata/annotations' });
    await annotatedRunning('pci-3', { [VERSION]: 'v3', [SLOTS]: '2' }, { remove: '/spec/template/metadata' });
    // act
    await reconcileUntilSettled(server, h, `${NS}/pci-2`);
    await reconcileUntilSettled(server, h, `${NS}/pci-3`);
    // assert
    assert.deepEqual((await h.kube.get(VMS, NS, 'pci-2'))?.spec.template.metadata, { labels: { app: 'x' }, annotations: { [VERSION]: 'v3' } });
    assert.deepEqual(vmPatchBodies('pci-2'), [[
      { op: 'test', path: '/spec/template/metadata/annotations', value: null },
      { op: 'add', path: '/spec/template/metadata/annotations', value: { [VERSION]: 'v3' } },
    ]]);
    assert.deepEqual((await h.kube.get(VMS, NS, 'pci-3'))?.spec.template.metadata, { annotations: { [VERSION]: 'v3', [SLOTS]: '2' } });
  });

  test('no version on the VMI (a machine type without PCIe: neither webhook writes one): nothing copied, even a slot count', async () => {
    // arrange
    await annotatedRunning('pci-4', { [SLOTS]: '2' }, { machine: 'pc-i440fx-rhel7.6.0' });
    // act
    await reconcileUntilSettled(server, h, `${NS}/pci-4`);
    // assert
    assert.deepEqual(vmPatchBodies('pci-4'), []);
    assert.deepEqual((await h.kube.get(VMS, NS, 'pci-4'))?.spec.template.metadata?.annotations, { 'example.com/note': 'from-template' });
  });
});
