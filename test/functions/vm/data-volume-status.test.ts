/**
 * printableStatus reads every DataVolume the VM's volumes name, not only its templated ones
 * (KubeVirt's HasDataVolumeErrors / HasDataVolumeProvisioning read the template's volumes; issue
 * 38 item 6): a VM on a DataVolume someone else made shows that DataVolume's failure or import.
 * And `WaitingForVolumeBinding` from the claims' phase, as KubeVirt reads it. One VM reconciled
 * against the emulator API server per row.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataVolume } from '../../../shared/api/index.ts';
import { DATA_VOLUMES, PVCS, VMS } from '../../../shared/api/resources.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';
import { NS, sandboxPerFile, vmManifest } from './support.ts';

const ctx = sandboxPerFile();

describe('printableStatus and a DataVolume the VM did not make', () => {
  const table: { name: string; status: NonNullable<DataVolume['status']>; runStrategy: string; want: string }[] = [
    { name: 'failed → DataVolumeError', status: { phase: 'Failed' }, runStrategy: 'Always', want: 'DataVolumeError' },
    { name: 'importing → Provisioning', status: { phase: 'ImportInProgress' }, runStrategy: 'Halted', want: 'Provisioning' },
    { name: 'its importer stopped on an error → DataVolumeError', status: { phase: 'ImportInProgress', conditions: [{ type: 'Running', status: 'False', reason: 'Error' }] }, runStrategy: 'Halted', want: 'DataVolumeError' },
  ];
  table.forEach((row, i) => {
    test(row.name, async () => {
      // arrange: the DataVolume exists on its own (no template of the VM)
      const name = `foreign-dv-${i}`;
      await ctx.h.kube.create(DATA_VOLUMES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: `${name}-disk`, namespace: NS }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } } } } } as DataVolume);
      await ctx.h.kube.patch(DATA_VOLUMES, NS, `${name}-disk`, { type: 'merge', body: { status: row.status } }, { subresource: 'status' });
      const vm = vmManifest(name, { runStrategy: row.runStrategy });
      vm.spec.template.spec!.volumes = [{ name: 'root', dataVolume: { name: `${name}-disk` } }];
      await ctx.h.kube.create(VMS, vm);
      // act
      for (let pass = 0; pass < 3; pass++) await reconcileVm(`${NS}/${name}`, ctx.h.deps).catch(() => undefined);
      // assert
      assert.equal((await ctx.h.kube.get(VMS, NS, name))?.status?.printableStatus, row.want);
    });
  });
});

describe('printableStatus WaitingForVolumeBinding reads the claims (KubeVirt\'s HasUnboundPVC)', () => {
  const table: { name: string; phase: string; runStrategy: string; want: string }[] = [
    { name: 'a PVC volume whose claim is Pending, VM set to start → WaitingForVolumeBinding', phase: 'Pending', runStrategy: 'Always', want: 'WaitingForVolumeBinding' },
    { name: 'the same claim, VM Halted → Stopped', phase: 'Pending', runStrategy: 'Halted', want: 'Stopped' },
    { name: 'a Bound claim → Starting', phase: 'Bound', runStrategy: 'Always', want: 'Starting' },
  ];
  table.forEach((row, i) => {
    test(row.name, async () => {
      // arrange: a claim in the given phase, named by a PVC volume
      const name = `unbound-${i}`;
      await ctx.h.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-disk`, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
      await ctx.h.kube.patch(PVCS, NS, `${name}-disk`, { type: 'merge', body: { status: { phase: row.phase } } }, { subresource: 'status' });
      const vm = vmManifest(name, { runStrategy: row.runStrategy });
      vm.spec.template.spec!.domain.devices.disks!.push({ name: 'data', disk: {} });
      vm.spec.template.spec!.volumes!.push({ name: 'data', persistentVolumeClaim: { claimName: `${name}-disk` } });
      await ctx.h.kube.create(VMS, vm);
      // act: the passes up to the start (the VMI is created, not yet scheduled)
      for (let pass = 0; pass < 3; pass++) await reconcileVm(`${NS}/${name}`, ctx.h.deps).catch(() => undefined);
      // assert
      assert.equal((await ctx.h.kube.get(VMS, NS, name))?.status?.printableStatus, row.want);
    });
  });
});
