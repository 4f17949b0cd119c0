import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { VirtualMachineInstance, Volume } from '../../shared/api/index.ts';
import { InvalidInputError, ReconcilerError } from '../../shared/errors.ts';
import { applyVmiDefaults, clusterConfigFromKubeVirt, renderLauncherPod } from '../../shared/template/index.ts';
import { validatePod } from './validate-pod.ts';

const config = clusterConfigFromKubeVirt();
const dnsLabel = fc.stringMatching(/^[a-z]([-a-z0-9]{0,20}[a-z0-9])?$/);
const quantity = fc.oneof(
  fc.constantFrom('1Gi', '512M', '64Mi', '1G', '100m', '0', '2', '1.5Gi', '12e6', 'junk', '-1Gi'),
  fc.nat({ max: 1 << 30 }).map(String),
);
const volume: fc.Arbitrary<Volume> = fc.tuple(dnsLabel, fc.nat({ max: 9 })).map(([name, kind]): Volume => {
  switch (kind) {
    case 0: return { name, containerDisk: { image: `quay.io/x/${name}:1` } };
    case 1: return { name, persistentVolumeClaim: { claimName: `c-${name}` } };
    case 2: return { name, dataVolume: { name: `dv-${name}` } };
    case 3: return { name, cloudInitNoCloud: { userData: '#cloud-config' } };
    case 4: return { name, cloudInitNoCloud: { secretRef: { name: 's' } } };
    case 5: return { name, configMap: { name: 'cm' } };
    case 6: return { name, secret: { secretName: 'sec' } };
    case 7: return { name, hostDisk: { path: `/data/${name}.img`, type: 'DiskOrCreate' } };
    case 8: return { name, emptyDisk: { capacity: '1Gi' } };
    default: return { name, downwardMetrics: {} };
  }
});
const vmiArb: fc.Arbitrary<VirtualMachineInstance> = fc.record({
  name: fc.oneof(dnsLabel, fc.stringMatching(/^[a-z][a-z0-9.-]{0,80}[a-z0-9]$/)),
  memory: fc.option(quantity, { nil: undefined }),
  cpu: fc.option(quantity, { nil: undefined }),
  cores: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
  dedicated: fc.boolean(),
  hugepages: fc.boolean(),
  volumes: fc.uniqueArray(volume, { maxLength: 5, selector: (v) => v.name }),
  labels: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}(\/[a-z]{1,8})?$/), fc.stringMatching(/^[a-z0-9]{0,10}$/), { maxKeys: 3 }),
  multus: fc.boolean(),
}).map((r) => ({
  metadata: { name: r.name, namespace: 'ns', uid: 'uid-1', labels: r.labels },
  spec: {
    domain: {
      devices: r.multus ? { interfaces: [{ name: 'default', masquerade: {} }, { name: 'sec', bridge: {} }] } : {},
      ...(r.cores !== undefined && { cpu: { cores: r.cores, dedicatedCpuPlacement: r.dedicated } }),
      resources: { requests: { ...(r.memory !== undefined && { memory: r.memory }), ...(r.cpu !== undefined && { cpu: r.cpu }) } },
      ...(r.hugepages && { memory: { guest: '1Gi', hugepages: { pageSize: '2Mi' } } }),
    },
    ...(r.multus && { networks: [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'other/net' } }] }),
    volumes: r.volumes,
  },
}));

test('any generated VMI renders a valid pod or throws a typed error, nothing else', () => {
  fc.assert(fc.property(vmiArb, (raw) => {
    let pod;
    try {
      pod = renderLauncherPod(applyVmiDefaults(raw, config), config);
    } catch (err) {
      assert.ok(err instanceof ReconcilerError, `untyped error: ${String(err)}`);
      if (err instanceof InvalidInputError) assert.ok(err.field.length > 0, 'the error names a field');
      return;
    }
    assert.deepEqual(validatePod(pod), []);
  }), { numRuns: 300 });
});
