/**
 * The VM manifest ConfigMap (issue 38 item 9; KubeVirt's generateVMDefinitionFromVm, extraVMData,
 * createManifestConfigMap): the pure parts as tables, then the reconcile against the sandbox API
 * server — the VM's instance type and preference expanded into the manifest, a `dv-<claim>` entry
 * for each claim without a DataVolume template, and a matcher that finds nothing failing the pass
 * before anything is created.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, CONFIG_MAPS, PODS, PVCS, VM_EXPORTS, VMS } from '../../../shared/api/resources.ts';
import { claimDataVolume, claimsWithoutTemplate, vmManifest } from '../../../functions/export/manifest.ts';
import { reconcileExport } from '../../../functions/export/reconcile.ts';
import { actions, exportManifest, harness, NS, publishExportCa, pvcManifest, vmSourceRef, type Harness } from './support.ts';

const vmOf = (spec: Partial<VirtualMachine['spec']>, metadata: VirtualMachine['metadata'] = { name: 'vm', namespace: 'ns' }): VirtualMachine =>
  ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata, spec: { template: { spec: { domain: { devices: {} } } }, ...spec } }) as VirtualMachine;
const volumes = (...vs: object[]): Partial<VirtualMachine['spec']> => ({ template: { spec: { domain: { devices: {} }, volumes: vs } } }) as never;
const dvTemplate = (name: string, spec: object = { source: { registry: { url: 'docker://x' } }, storage: {} }) => ({ metadata: { name }, spec });

describe('the claims that get a dv- entry', () => {
  const table: { name: string; vm: VirtualMachine; want: string[] }[] = [
    { name: 'a PVC volume without a template', vm: vmOf(volumes({ name: 'a', persistentVolumeClaim: { claimName: 'c1' } })), want: ['c1'] },
    { name: 'a DataVolume volume without a template', vm: vmOf(volumes({ name: 'a', dataVolume: { name: 'dv1' } })), want: ['dv1'] },
    { name: 'a DataVolume volume with its template: none', vm: vmOf({ ...volumes({ name: 'a', dataVolume: { name: 'dv1' } }), dataVolumeTemplates: [dvTemplate('dv1')] as never }), want: [] },
    { name: 'other volumes: none', vm: vmOf(volumes({ name: 'ci', cloudInitNoCloud: { userData: 'x' } }, { name: 'c', containerDisk: { image: 'i' } })), want: [] },
    { name: 'volume order kept', vm: vmOf(volumes({ name: 'b', persistentVolumeClaim: { claimName: 'zz' } }, { name: 'a', dataVolume: { name: 'aa' } })), want: ['zz', 'aa'] },
  ];
  for (const row of table) {
    test(row.name, () => {
      // act / assert
      assert.deepEqual(claimsWithoutTemplate(row.vm), row.want);
    });
  }
});

describe('the virtualmachine-manifest object', () => {
  test('metadata reduced to name, namespace, labels, annotations; no apiVersion/kind; status {} (as KubeVirt writes it)', () => {
    // arrange
    const vm = vmOf({}, { name: 'vm', namespace: 'ns', uid: 'u', resourceVersion: '7', generation: 3, labels: { a: 'b' }, annotations: { c: 'd' }, finalizers: ['f'], managedFields: [] } as never);
    (vm as { status?: object }).status = { printableStatus: 'Stopped' };
    // act
    const got = vmManifest(vm);
    // assert
    assert.deepEqual(got.metadata, { name: 'vm', namespace: 'ns', labels: { a: 'b' }, annotations: { c: 'd' } });
    assert.deepEqual(got.status, {});
    assert.deepEqual(Object.keys(got), ['metadata', 'spec', 'status']);
  });

  const table: { name: string; templates: object[]; vols: object[]; want: object[] }[] = [
    {
      name: 'a template that backs a volume: an HTTP source with url "", its sourceRef dropped',
      templates: [dvTemplate('d1', { sourceRef: { kind: 'DataSource', name: 'fedora' }, storage: { resources: { requests: { storage: '1Gi' } } } })],
      vols: [{ name: 'a', dataVolume: { name: 'd1' } }],
      want: [{ metadata: { name: 'd1' }, spec: { source: { http: { url: '' } }, storage: { resources: { requests: { storage: '1Gi' } } } } }],
    },
    {
      name: 'a template a PVC volume names: rewritten too',
      templates: [dvTemplate('d2')],
      vols: [{ name: 'a', persistentVolumeClaim: { claimName: 'd2' } }],
      want: [{ metadata: { name: 'd2' }, spec: { source: { http: { url: '' } }, storage: {} } }],
    },
    {
      name: 'a template no volume names: unchanged',
      templates: [dvTemplate('orphan')],
      vols: [],
      want: [dvTemplate('orphan')],
    },
  ];
  for (const row of table) {
    test(row.name, () => {
      // arrange
      const vm = vmOf({ ...volumes(...row.vols), dataVolumeTemplates: row.templates as never });
      // act
      const got = vmManifest(vm).spec as { dataVolumeTemplates: object[] };
      // assert
      assert.deepEqual(got.dataVolumeTemplates, row.want);
    });
  }
});

describe('the dv- DataVolume of a claim', () => {
  const claim = (spec: V1PersistentVolumeClaim['spec']): V1PersistentVolumeClaim => ({ metadata: { name: 'c', namespace: 'ns', uid: 'x', labels: { l: 'v' } }, spec });
  const table: { name: string; spec: V1PersistentVolumeClaim['spec']; wantStorage: object }[] = [
    { name: 'access modes, requests, volume mode', spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Block' }, wantStorage: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Block' } },
    { name: 'limits too, quantities canonical', spec: { resources: { requests: { storage: '1024Mi' }, limits: { storage: '2048Mi' } } }, wantStorage: { resources: { limits: { storage: '2Gi' }, requests: { storage: '1Gi' } } } },
    { name: 'no resources: an empty struct, as Go writes it', spec: {}, wantStorage: { resources: {} } },
  ];
  for (const row of table) {
    test(row.name, () => {
      // act
      const got = claimDataVolume(claim(row.spec), 'ns');
      // assert
      assert.deepEqual(got, { metadata: { name: 'c', namespace: 'ns' }, spec: { source: { http: { url: '' } }, storage: row.wantStorage }, status: {} });
    });
  }
});

describe('the manifest ConfigMap of a VM export (sandbox API server)', () => {
  let server: ApiServer;
  let h: Harness;
  before(async () => {
    server = await startApiServer({ port: 0 });
    h = harness(server);
    await publishExportCa(h.kube);
    await h.kube.create(CLUSTER_INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'm.small' }, spec: { cpu: { guest: 2 }, memory: { guest: '1Gi' } } });
    await h.kube.create(CLUSTER_PREFERENCES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterPreference', metadata: { name: 'm.pref' }, spec: { devices: { preferredDiskBus: 'sata' } } });
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    h = harness(server);
    server.audit.clear();
  });

  async function boundPvc(name: string) {
    await h.kube.create(PVCS, pvcManifest(name));
    await h.kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
  }
  const vmWith = (name: string, spec: object): VirtualMachine =>
    ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: NS, labels: { app: name } }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: { disks: [{ name: 'disk' }] } }, volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: `${name}-disk` } }] } }, ...spec } }) as VirtualMachine;
  const manifestOf = async (exportName: string) => {
    const cm = await h.kube.get(CONFIG_MAPS, NS, `exporter-vm-manifest-${exportName}`);
    assert.ok(cm, 'the manifest ConfigMap exists');
    return cm;
  };

  test('a VM with an instance type and a preference: both expanded into the manifest, the matchers gone', async () => {
    // arrange
    await boundPvc('it1-disk');
    await h.kube.create(VMS, vmWith('it1', { instancetype: { name: 'm.small' }, preference: { name: 'm.pref' } }));
    await h.kube.create(VM_EXPORTS, exportManifest('exp-it1', vmSourceRef('it1')));
    // act
    await reconcileExport(`${NS}/exp-it1`, h.deps);
    // assert
    const vm = JSON.parse((await manifestOf('exp-it1')).data?.['virtualmachine-manifest'] ?? '{}') as VirtualMachine;
    assert.equal(vm.spec.instancetype, undefined, 'the instance type matcher is expanded away');
    assert.equal(vm.spec.preference, undefined, 'the preference matcher is expanded away');
    assert.equal(vm.spec.template.spec?.domain.cpu?.sockets, 2, "the instance type's guest CPUs, as sockets (the default topology)");
    assert.equal(vm.spec.template.spec?.domain.memory?.guest, '1Gi', "the instance type's guest memory");
    assert.equal(vm.spec.template.spec?.domain.devices.disks?.[0]?.disk?.bus, 'sata', "the preference's disk bus");
    assert.deepEqual(vm.metadata, { name: 'it1', namespace: NS, labels: { app: 'it1' } });
    assert.ok(await h.kube.get(PODS, NS, 'virt-export-exp-it1'), 'the exporter pod follows');
  });

  test('a VM without matchers: its spec as it is, no defaults added', async () => {
    // arrange
    await boundPvc('plain-disk');
    const vm = vmWith('plain', {});
    await h.kube.create(VMS, vm);
    await h.kube.create(VM_EXPORTS, exportManifest('exp-plain', vmSourceRef('plain')));
    // act
    await reconcileExport(`${NS}/exp-plain`, h.deps);
    // assert
    const got = JSON.parse((await manifestOf('exp-plain')).data?.['virtualmachine-manifest'] ?? '{}') as VirtualMachine;
    assert.deepEqual(got.spec.template.spec?.domain, { devices: { disks: [{ name: 'disk' }] } }, 'nothing expanded, nothing defaulted');
  });

  test('a DataVolume template and a plain claim: the template rewritten, a dv- entry only for the claim', async () => {
    // arrange
    await boundPvc('mix-data');
    await h.kube.create(PVCS, { ...pvcManifest('mix-root'), metadata: { name: 'mix-root', namespace: NS, ownerReferences: [] } });
    await h.kube.patch(PVCS, NS, 'mix-root', { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
    await h.kube.create(VMS, {
      ...vmWith('mix', {}),
      spec: {
        runStrategy: 'Halted',
        dataVolumeTemplates: [{ metadata: { name: 'mix-root' }, spec: { sourceRef: { kind: 'DataSource', name: 'fedora' }, storage: { resources: { requests: { storage: '1Gi' } } } } }],
        template: { spec: { domain: { devices: {} }, volumes: [{ name: 'root', dataVolume: { name: 'mix-root' } }, { name: 'data', persistentVolumeClaim: { claimName: 'mix-data' } }] } },
      },
    } as never);
    await h.kube.create(VM_EXPORTS, exportManifest('exp-mix', vmSourceRef('mix')));
    // act
    await reconcileExport(`${NS}/exp-mix`, h.deps);
    // assert
    const data = (await manifestOf('exp-mix')).data ?? {};
    assert.deepEqual(Object.keys(data).filter((k) => k.startsWith('dv-')), ['dv-mix-data']);
    const vm = JSON.parse(data['virtualmachine-manifest'] ?? '{}') as VirtualMachine;
    assert.deepEqual(vm.spec.dataVolumeTemplates?.[0]?.spec, { source: { http: { url: '' } }, storage: { resources: { requests: { storage: '1Gi' } } } } as never);
  });

  test('an instance type that does not exist: the pass fails with a clear error, nothing created', async () => {
    // arrange
    await boundPvc('gone-disk');
    await h.kube.create(VMS, vmWith('gone', { instancetype: { name: 'no.such' } }));
    await h.kube.create(VM_EXPORTS, exportManifest('exp-gone', vmSourceRef('gone')));
    // act / assert
    await assert.rejects(reconcileExport(`${NS}/exp-gone`, h.deps), /expanding the instance type of VirtualMachine default\/gone for its export manifest: .*"no\.such" not found/);
    assert.equal(await h.kube.get(CONFIG_MAPS, NS, 'exporter-vm-manifest-exp-gone'), undefined, 'no manifest');
    assert.equal(await h.kube.get(PODS, NS, 'virt-export-exp-gone'), undefined, 'no pod');
    assert.ok(!actions(server).some((a) => a.startsWith('create pods') || a.startsWith('create configmaps')), 'no pod or ConfigMap written');
  });
});
