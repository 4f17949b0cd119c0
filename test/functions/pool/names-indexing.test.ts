import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { indexedVmSpec } from '../../../functions/pool/indexing.ts';
import { indexOf, nextVmNames } from '../../../functions/pool/names.ts';
import { renderUpdatedVm, renderVm } from '../../../functions/pool/render-vm.ts';
import { POOL_FINALIZER, REVISION_LABEL } from '../../../functions/pool/well-known.ts';
import { poolManifest } from './fixtures.ts';

describe('pool VM names', () => {
  const cases: Array<{ name: string; taken: string[]; count: number; want: string[] }> = [
    { name: 'empty namespace: 0, 1, 2', taken: [], count: 3, want: ['p-0', 'p-1', 'p-2'] },
    { name: 'gaps are filled first', taken: ['p-0', 'p-2', 'p-3'], count: 3, want: ['p-1', 'p-4', 'p-5'] },
    { name: 'any VM takes its name (orphans, other owners)', taken: ['p-0', 'other-1'], count: 2, want: ['p-1', 'p-2'] },
    { name: 'nothing asked, nothing given', taken: [], count: 0, want: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = nextVmNames('p', new Set(c.taken), c.count).map((n) => n.name);
      // assert
      assert.deepEqual(got, c.want);
    });
  }

  const indexes: Array<[string, number]> = [['p-0', 0], ['p-12', 12], ['my-pool-3', 3], ['nodash', 0], ['p-x', 0], ['p-', 0]];
  for (const [name, want] of indexes) test(`index of ${name} is ${want}`, () => assert.equal(indexOf(name), want));
});

describe('name indexing of the VM spec', () => {
  const pool = poolManifest('p');
  pool.spec.virtualMachineTemplate.spec = {
    dataVolumeTemplates: [{ metadata: { name: 'disk' }, spec: { storage: {} } } as never],
    template: {
      spec: {
        domain: { devices: {} },
        volumes: [
          { name: 'a', dataVolume: { name: 'disk' } },
          { name: 'b', persistentVolumeClaim: { claimName: 'disk' } },
          { name: 'c', persistentVolumeClaim: { claimName: 'shared' } },
          { name: 'd', configMap: { name: 'cm' } },
          { name: 'e', secret: { secretName: 'sec' } },
          { name: 'f', cloudInitNoCloud: { secretRef: { name: 'ud' }, networkDataSecretRef: { name: 'nd' } } },
          { name: 'g', cloudInitConfigDrive: { secretRef: { name: 'ud2' } } },
        ],
      },
    },
  };
  const cases: Array<{ name: string; configMaps: boolean; secrets: boolean; want: unknown[] }> = [
    {
      name: 'DataVolumes always; ConfigMaps and Secrets untouched by default',
      configMaps: false,
      secrets: false,
      want: ['disk-3', 'disk-3', 'shared', 'cm', 'sec', 'ud', 'nd', 'ud2'],
    },
    { name: 'appendIndexToConfigMapRefs', configMaps: true, secrets: false, want: ['disk-3', 'disk-3', 'shared', 'cm-3', 'sec', 'ud', 'nd', 'ud2'] },
    { name: 'appendIndexToSecretRefs: secrets and cloud-init secret refs', configMaps: false, secrets: true, want: ['disk-3', 'disk-3', 'shared', 'cm', 'sec-3', 'ud-3', 'nd-3', 'ud2-3'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const p = { ...pool, spec: { ...pool.spec, nameGeneration: { appendIndexToConfigMapRefs: c.configMaps, appendIndexToSecretRefs: c.secrets } } };
      // act
      const spec = indexedVmSpec(p, 3);
      // assert
      const v = spec.template.spec?.volumes ?? [];
      const got = [
        v[0]?.dataVolume?.name,
        v[1]?.persistentVolumeClaim?.claimName,
        v[2]?.persistentVolumeClaim?.claimName,
        v[3]?.configMap?.name,
        v[4]?.secret?.secretName,
        v[5]?.cloudInitNoCloud?.secretRef?.name,
        v[5]?.cloudInitNoCloud?.networkDataSecretRef?.name,
        v[6]?.cloudInitConfigDrive?.secretRef?.name,
      ];
      assert.deepEqual(got, c.want);
      assert.equal(spec.dataVolumeTemplates?.[0]?.metadata?.name, 'disk-3');
      assert.equal(pool.spec.virtualMachineTemplate.spec?.dataVolumeTemplates?.[0]?.metadata?.name, 'disk', 'the pool is never mutated');
    });
  }
});

describe('rendered VMs', () => {
  test('a new VM: template labels + revision label (VM and VMI template), finalizer, controller ref', () => {
    // arrange
    const pool = poolManifest('p');
    pool.metadata = { ...pool.metadata, uid: 'u1' };
    pool.spec.virtualMachineTemplate.metadata = { name: 'ignored', labels: { app: 'p' }, annotations: { a: 'b' } };
    // act
    const vm = renderVm(pool, 'p-4', 4, 'p-1');
    // assert
    assert.equal(vm.metadata?.name, 'p-4');
    assert.deepEqual(vm.metadata?.labels, { app: 'p', [REVISION_LABEL]: 'p-1' });
    assert.deepEqual(vm.metadata?.annotations, { a: 'b' });
    assert.deepEqual(vm.metadata?.finalizers, [POOL_FINALIZER]);
    assert.deepEqual(vm.metadata?.ownerReferences, [{ apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', name: 'p', uid: 'u1', controller: true, blockOwnerDeletion: true }]);
    assert.equal(vm.spec.template.metadata?.labels?.[REVISION_LABEL], 'p-1');
  });

  const firmware: Array<{ name: string; old: Record<string, string> | undefined; want: unknown }> = [
    { name: 'firmware uuid and serial survive an opportunistic update', old: { uuid: 'u-1', serial: 's-1' }, want: { uuid: 'u-1', serial: 's-1' } },
    { name: 'only non-empty values are kept', old: { uuid: 'u-1', serial: '' }, want: { uuid: 'u-1' } },
    { name: 'no firmware block: none added', old: undefined, want: undefined },
  ];
  for (const c of firmware) {
    test(c.name, () => {
      // arrange
      const pool = poolManifest('p');
      const vm = renderVm(pool, 'p-0', 0, 'p-1');
      vm.metadata = { ...vm.metadata, resourceVersion: '7', labels: { edited: 'yes' }, finalizers: ['other', POOL_FINALIZER] };
      if (c.old) vm.spec.template.spec!.domain.firmware = c.old;
      // act
      const next = renderUpdatedVm(pool, vm, 'p-2');
      // assert
      assert.deepEqual(next.spec.template.spec?.domain.firmware, c.want);
      assert.deepEqual(next.metadata?.labels, { app: 'p', [REVISION_LABEL]: 'p-2' }, 'labels are replaced (edits lost, as upstream)');
      assert.deepEqual([next.metadata?.resourceVersion, next.metadata?.finalizers], ['7', ['other', POOL_FINALIZER]]);
    });
  }
});
