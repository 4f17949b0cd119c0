/**
 * The VMI's DataVolumesReady condition (functions/vmi/data-volumes-ready.ts), as KubeVirt's VMI
 * controller aggregates it (`aggregateDataVolumesConditions`), and which DataVolumes a VMI's
 * volumes stand on (`ListDataVolumesFromVolumes`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance, VirtualMachineInstanceStatus } from '../../../shared/api/index.ts';
import { aggregateDataVolumesReady, dataVolumeNamesOf } from '../../../functions/vmi/data-volumes-ready.ts';

function dv(name: string, ready?: 'True' | 'False' | 'Unknown'): DataVolume {
  return { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name }, spec: {}, status: ready ? { conditions: [{ type: 'Ready', status: ready }] } : {} } as DataVolume;
}

describe('DataVolumesReady', () => {
  const cases: { name: string; dvs: DataVolume[]; want?: { status: string; reason: string; message: string } }[] = [
    { name: 'no DataVolume: no condition', dvs: [] },
    { name: 'all Ready', dvs: [dv('a', 'True'), dv('b', 'True')], want: { status: 'True', reason: 'AllDVsReady', message: "All of the VMI's DVs are bound and ready" } },
    { name: 'one not Ready', dvs: [dv('a', 'True'), dv('b', 'False')], want: { status: 'False', reason: 'NotAllDVsReady', message: "Not all of the VMI's DVs are ready" } },
    { name: 'one without a Ready condition: Unknown', dvs: [dv('a', 'True'), dv('b')], want: { status: 'Unknown', reason: 'NotAllDVsReady', message: "Not all of the VMI's DVs are ready" } },
    { name: 'False wins over Unknown, in either order', dvs: [dv('a', 'False'), dv('b', 'Unknown')], want: { status: 'False', reason: 'NotAllDVsReady', message: "Not all of the VMI's DVs are ready" } },
    { name: 'Unknown then False: False', dvs: [dv('a', 'Unknown'), dv('b', 'False')], want: { status: 'False', reason: 'NotAllDVsReady', message: "Not all of the VMI's DVs are ready" } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const status: VirtualMachineInstanceStatus = {};
      // act
      aggregateDataVolumesReady(status, c.dvs);
      // assert
      const got = status.conditions?.find((x) => x.type === 'DataVolumesReady');
      if (!c.want) assert.equal(got, undefined, 'no DataVolume must leave the conditions alone');
      else assert.deepEqual(got, { type: 'DataVolumesReady', ...c.want, lastProbeTime: null, lastTransitionTime: null });
    });
  }

  test('an unchanged status and reason keeps the condition as it was; no DataVolume never removes it', () => {
    // arrange
    const old = { type: 'DataVolumesReady', status: 'True', reason: 'AllDVsReady', message: 'as written before', lastProbeTime: null, lastTransitionTime: null };
    const status: VirtualMachineInstanceStatus = { conditions: [old] };
    // act
    aggregateDataVolumesReady(status, [dv('a', 'True')]);
    aggregateDataVolumesReady(status, []);
    // assert
    assert.deepEqual(status.conditions, [old]);
  });

  test("the DataVolumes behind a VMI's volumes: dataVolume volumes, and claims a DataVolume controls", () => {
    // arrange
    const vmi = {
      spec: {
        domain: { devices: {} },
        volumes: [
          { name: 'a', dataVolume: { name: 'dv-a' } },
          { name: 'b', persistentVolumeClaim: { claimName: 'from-dv' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'plain' } },
          { name: 'd', persistentVolumeClaim: { claimName: 'not-read' } },
          { name: 'e', dataVolume: { name: 'dv-a' } },
        ],
      },
    } as unknown as VirtualMachineInstance;
    const claims = new Map<string, V1PersistentVolumeClaim>([
      ['from-dv', { metadata: { name: 'from-dv', ownerReferences: [{ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: 'dv-b', uid: 'u', controller: true }] } }],
      ['plain', { metadata: { name: 'plain' } }],
    ]);
    // act
    const names = dataVolumeNamesOf(vmi, claims);
    // assert
    assert.deepEqual(names, ['dv-a', 'dv-b']);
  });
});
