/**
 * virt-api's VMI and VM create mutators as the sandbox emulates them (sandbox/kubevirt/
 * vmi-mutation.ts, vm-mutation.ts): every case of the differential corpus (test/differential/cases)
 * through the VMI mutator, compared with the VMI KubeVirt's own mutator returned for it
 * (`kubevirt-vmi.yaml`, render-oracle at the corpus's KubeVirt commit); then the rules the corpus
 * does not vary, by table.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, test } from 'node:test';
import type { KubeVirt, VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { mutateVmiOnCreate } from '../../../sandbox/kubevirt/vmi-mutation.ts';
import { mutateVmOnCreate } from '../../../sandbox/kubevirt/vm-mutation.ts';
import { kubevirtCr, loadCorpus } from '../../differential/corpus.ts';

const NOW = '1970-01-01T00:00:00Z';
const UUID = '00000000-0000-4000-8000-000000000001';

/**
 * Fields only KubeVirt's Go decoding drops (its types do not know them: a typo'd `userDataSecretRef`,
 * `configMap.items`, `firmware.sku`); the API server prunes them by the CRD schema on both lanes.
 */
const GO_DROPS = new Map([
  ['cloudinit-configdrive-secretref', '.spec.volumes.1.cloudInitConfigDrive.userDataSecretRef'],
  ['cloudinit-nocloud-secretref', '.spec.volumes.1.cloudInitNoCloud.userDataSecretRef'],
  ['combo-fedora-cloud', '.spec.volumes.1.cloudInitNoCloud.userDataSecretRef'],
  ['configmap-optional-items', '.spec.volumes.1.configMap.items'],
  ['firmware-bios-serial', '.spec.domain.firmware.sku'],
]);

function differences(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return [`${path}: ours ${JSON.stringify(a)}, KubeVirt's ${JSON.stringify(b)}`];
}

const cr = (configuration: Record<string, unknown>, annotations?: Record<string, string>) => ({ apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt', ...(annotations ? { annotations } : {}) }, spec: { configuration } }) as KubeVirt;
const minimal = (): VirtualMachineInstance => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default' }, spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } } }) as VirtualMachineInstance;

describe('the VMI create mutator', () => {
  test('gives every corpus VMI what KubeVirt\'s mutator gave it (the random firmware UUID aside)', () => {
    const cases = loadCorpus().filter((c) => c.kubevirt.kind === 'pod');
    assert.ok(cases.length > 200, `the corpus has ${cases.length} rendered cases`);
    const wrong: string[] = [];
    for (const c of cases) {
      // arrange
      const kubevirt = c.kubevirt.kind === 'pod' ? structuredClone(c.kubevirt.vmi) : undefined;
      // act
      const ours = mutateVmiOnCreate(c.vmi, { kubevirt: kubevirtCr(c) as KubeVirt | undefined, now: NOW, newUuid: () => UUID });
      // assert (collected: one message names every case that differs)
      if (!c.vmi.spec?.domain?.firmware?.uuid) {
        assert.match(String(kubevirt?.spec.domain.firmware?.uuid), /^[0-9a-f-]{36}$/, `${c.name}: KubeVirt gave a firmware UUID`);
        kubevirt!.spec.domain.firmware!.uuid = UUID;
      }
      const diffs = differences(ours, kubevirt).filter((d) => !d.startsWith(`${GO_DROPS.get(c.name)}:`));
      if (diffs.length > 0) wrong.push(`${c.name}\n  ${diffs.join('\n  ')}`);
    }
    assert.deepEqual(wrong, [], 'cases where the emulated mutator differs from KubeVirt\'s');
  });

  test('runtimeUser, CPU model, finalizer, phase: by cluster setting', () => {
    const rows: { name: string; kv: KubeVirt | undefined; input?: VirtualMachineInstance; runtimeUser: number; model: string; finalizers: number }[] = [
      { name: 'no CR: non-root, host-model', kv: undefined, runtimeUser: 107, model: 'host-model', finalizers: 1 },
      { name: 'Root gate: root (0, written as Go writes it)', kv: cr({ developerConfiguration: { featureGates: ['Root'] } }), runtimeUser: 0, model: 'host-model', finalizers: 1 },
      { name: 'the CR\'s cpuModel', kv: cr({ cpuModel: 'Haswell' }), runtimeUser: 107, model: 'Haswell', finalizers: 1 },
      { name: 'the VMI\'s own model wins', kv: cr({ cpuModel: 'Haswell' }), input: { ...minimal(), spec: { domain: { devices: {}, cpu: { model: 'Skylake' } } } } as VirtualMachineInstance, runtimeUser: 107, model: 'Skylake', finalizers: 1 },
      { name: 'a VMI that names the finalizer gets it twice, as KubeVirt appends', kv: undefined, input: { ...minimal(), metadata: { name: 'v', finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'] } } as VirtualMachineInstance, runtimeUser: 107, model: 'host-model', finalizers: 2 },
      { name: 'a runtimeUser sent by the client is overwritten without the Root gate', kv: undefined, input: { ...minimal(), status: { runtimeUser: 0 } } as VirtualMachineInstance, runtimeUser: 107, model: 'host-model', finalizers: 1 },
    ];
    for (const row of rows) {
      // act
      const got = mutateVmiOnCreate(row.input ?? minimal(), { kubevirt: row.kv, now: NOW, newUuid: () => UUID });
      // assert
      assert.equal(got.status?.runtimeUser, row.runtimeUser, row.name);
      assert.equal(got.spec.domain.cpu?.model, row.model, row.name);
      assert.equal(got.metadata?.finalizers?.filter((f) => f === 'kubevirt.io/foregroundDeleteVirtualMachine').length, row.finalizers, row.name);
      assert.equal(got.status?.phase, 'Pending', row.name);
      assert.deepEqual(got.status?.phaseTransitionTimestamps, [{ phase: 'Pending', phaseTransitionTimestamp: NOW }], row.name);
    }
  });

  test('a firmware UUID the VMI names is kept; one it lacks is new per VMI', () => {
    // arrange
    const named = { ...minimal(), spec: { domain: { devices: {}, firmware: { uuid: 'mine' } } } } as VirtualMachineInstance;
    // act
    const kept = mutateVmiOnCreate(named, { kubevirt: undefined, now: NOW });
    const a = mutateVmiOnCreate(minimal(), { kubevirt: undefined, now: NOW });
    const b = mutateVmiOnCreate(minimal(), { kubevirt: undefined, now: NOW });
    // assert
    assert.equal(kept.spec.domain.firmware?.uuid, 'mine');
    assert.notEqual(a.spec.domain.firmware?.uuid, b.spec.domain.firmware?.uuid, 'random (uuid v4) per VMI');
  });
});

describe('the VM create mutator', () => {
  const vm = (firmware?: Record<string, string>): VirtualMachine => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm', namespace: 'default' }, spec: { runStrategy: 'Always', template: { spec: { domain: { devices: {}, ...(firmware ? { firmware } : {}) } } } } }) as VirtualMachine;

  test('firmware UUID and serial, architecture, machine type and the PCI topology version on the template', () => {
    // arrange
    let n = 0;
    // act
    const got = mutateVmOnCreate(vm(), undefined, () => `uuid-${++n}`);
    // assert
    assert.deepEqual(got.spec.template.spec?.domain.firmware, { uuid: 'uuid-1', serial: 'uuid-2' });
    assert.equal(got.spec.template.spec?.architecture, 'amd64');
    assert.equal(got.spec.template.spec?.domain.machine?.type, 'q35');
    assert.equal(got.spec.template.metadata?.annotations?.['kubevirt.io/pci-topology-version'], 'v3');
  });

  test('a template\'s own firmware UUID and serial are kept', () => {
    // act
    const got = mutateVmOnCreate(vm({ uuid: 'u', serial: 's' }), undefined, () => 'new');
    // assert
    assert.deepEqual(got.spec.template.spec?.domain.firmware, { uuid: 'u', serial: 's' });
  });
});
