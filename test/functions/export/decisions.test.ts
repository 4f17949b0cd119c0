/** The export controller's pure decisions, table-driven: names, certificate parameters and deadline, sources, the relay mapping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { podNameOf, selectorValueOf, serviceNameOf, tokenSecretNameOf } from '../../../functions/export/names.ts';
import { certParamsAnnotation, certParamsOf, podDeadlineMs, rfc3339 } from '../../../functions/export/render-pod.ts';
import { exportMapper } from '../../../functions/export/wakes.ts';
import { claimInUse, isKubevirtContent, sourceKindOf, vmSource } from '../../../functions/export/source.ts';
import { fnv32aHex } from '../../../shared/storage/get-name.ts';

describe('export names', () => {
  const a53 = 'a'.repeat(53);
  const b70 = 'b'.repeat(70);
  const cases = [
    { name: 'test', svc: 'virt-export-test', pod: 'virt-export-test', token: 'export-token-test', selector: 'test' },
    { name: 'test.com', svc: 'virt-export-test-com', pod: 'virt-export-test.com', token: 'export-token-test.com', selector: 'test.com' },
    // 53 characters lose one for the service (quirk 11); GetName then keeps the suffix and hashes the base.
    { name: a53, svc: `v-${fnv32aHex('virt-export')}-${'a'.repeat(52)}`, pod: `virt-export-${fnv32aHex(`virt-export-${a53}`)}`, token: `export-token-${fnv32aHex(`export-token-${a53}`)}`, selector: a53 },
    { name: b70, svc: `virt-export-${fnv32aHex(`virt-export-${b70}`)}`, pod: `virt-export-${fnv32aHex(`virt-export-${b70}`)}`, token: `export-token-${fnv32aHex(`export-token-${b70}`)}`, selector: `virt-export-${fnv32aHex(`virt-export-${b70}`)}` },
  ];
  for (const c of cases) {
    test(c.name.length > 20 ? `${c.name.length} characters` : c.name, () => {
      assert.equal(serviceNameOf(c.name), c.svc);
      assert.equal(podNameOf(c.name), c.pod);
      assert.equal(tokenSecretNameOf(c.name), c.token);
      assert.equal(selectorValueOf(c.name), c.selector);
      for (const n of [c.svc, c.pod, c.token]) assert.ok(n.length <= 63, n);
    });
  }
});

describe('certificate parameters and the pod deadline', () => {
  const H = 3_600_000;
  const cases = [
    { name: 'defaults: 24 h, renew 0.2 ×', spec: undefined, want: '{"Duration":86400000000000,"RenewBefore":17280000000000}' },
    { name: 'duration only', spec: { duration: '10h' }, want: '{"Duration":36000000000000,"RenewBefore":7200000000000}' },
    { name: 'both', spec: { duration: '10h', renewBefore: '1h' }, want: '{"Duration":36000000000000,"RenewBefore":3600000000000}' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const kv = c.spec ? ({ spec: { certificateRotateStrategy: { selfSigned: { server: c.spec } } } } as never) : undefined;
      assert.equal(certParamsAnnotation(certParamsOf(kv)), c.want);
    });
  }
  test('DEADLINE is the earlier of renewal and TTL', () => {
    const p = certParamsOf(undefined);
    assert.equal(podDeadlineMs(0, p, 2 * H), 2 * H);
    assert.equal(podDeadlineMs(0, p, 48 * H), 24 * H - 0.2 * 24 * H);
    assert.equal(rfc3339(Date.parse('2026-03-01T12:00:00.789Z')), '2026-03-01T12:00:00Z');
  });
});

describe('sources', () => {
  const pvc = (o: { annotations?: Record<string, string>; volumeMode?: string } = {}): V1PersistentVolumeClaim => ({ metadata: { name: 'c', ...(o.annotations ? { annotations: o.annotations } : {}) }, spec: { ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}) } });
  const kinds: { ref: { apiGroup?: string; kind: string }; want: string | undefined }[] = [
    { ref: { kind: 'PersistentVolumeClaim' }, want: 'pvc' },
    { ref: { apiGroup: '', kind: 'PersistentVolumeClaim' }, want: 'pvc' },
    { ref: { apiGroup: 'v1', kind: 'PersistentVolumeClaim' }, want: undefined },
    { ref: { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot' }, want: 'snapshot' },
    { ref: { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineRestore' }, want: undefined },
    { ref: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine' }, want: 'vm' },
    { ref: { apiGroup: 'kubevirt.io', kind: 'VirtualMachineInstance' }, want: undefined },
    { ref: { apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackup' }, want: 'backup' },
    { ref: { kind: 'VirtualMachineBackup' }, want: 'backup' },
    { ref: { apiGroup: 'template.kubevirt.io', kind: 'VirtualMachineTemplate' }, want: undefined },
  ];
  for (const row of kinds) {
    test(`source kind of ${row.ref.apiGroup ?? '(no group)'}/${row.ref.kind}: ${row.want ?? 'not exported'} (KubeVirt's isSource* checks, group and kind)`, () => {
      // act / assert
      assert.equal(sourceKindOf(row.ref), row.want);
    });
  }
  const content = [
    { name: 'plain claim', pvc: pvc(), want: false },
    { name: 'block', pvc: pvc({ volumeMode: 'Block' }), want: true },
    { name: 'contentType kubevirt', pvc: pvc({ annotations: { 'cdi.kubevirt.io/storage.contentType': 'kubevirt' } }), want: true },
    { name: 'contentType empty', pvc: pvc({ annotations: { 'cdi.kubevirt.io/storage.contentType': '' } }), want: true },
    { name: 'contentType archive', pvc: pvc({ annotations: { 'cdi.kubevirt.io/storage.contentType': 'archive' } }), want: false },
  ];
  for (const c of content) test(`kubevirt content: ${c.name}`, () => assert.equal(isKubevirtContent(c.pvc, undefined), c.want));
  test('in use: a pod mounting the claim, unless Succeeded or our own exporter', () => {
    const pod = (phase: string, owner?: string): V1Pod => ({ metadata: { ...(owner ? { ownerReferences: [{ apiVersion: 'v', kind: 'VirtualMachineExport', name: 'e', uid: owner, controller: true }] } : {}) }, spec: { containers: [], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }, status: { phase } });
    assert.equal(claimInUse('c', [pod('Running')], 'u1'), true);
    assert.equal(claimInUse('c', [pod('Succeeded')], 'u1'), false);
    assert.equal(claimInUse('c', [pod('Running', 'u1')], 'u1'), false);
    assert.equal(claimInUse('other', [pod('Running')], 'u1'), false);
  });
  test('VM: a DataVolume volume whose claim does not exist yet is not populated; a needed backend claim missing empties the volumes', () => {
    const vm = { metadata: { name: 'v' }, spec: {} } as never;
    const bound = { metadata: { name: 'a' }, status: { phase: 'Bound' } };
    const notYet = vmSource('ns', 'v', vm, undefined, [{ claimName: 'a', pvc: bound, dv: undefined, fromDataVolume: false }, { claimName: 'b', pvc: undefined, dv: undefined, fromDataVolume: true }], false);
    assert.equal(notYet.populated, false);
    assert.equal(notYet.readyCondition.reason, 'VolumesNotPopulated');
    const backend = vmSource('ns', 'v', vm, undefined, [{ claimName: 'a', pvc: bound, dv: undefined, fromDataVolume: false }], true);
    assert.equal(backend.volumes.length, 0);
    const stopped = vmSource('ns', 'v', vm, { status: { phase: 'Succeeded' } } as never, [{ claimName: 'a', pvc: bound, dv: undefined, fromDataVolume: false }], false);
    assert.equal(stopped.inUse, false, 'a Succeeded VMI does not hold the VM');
  });
});

describe('export relay mapping', () => {
  const exp = (name: string, source: Record<string, unknown>) => ({ metadata: { name, namespace: 'ns' }, spec: { source } });
  test('sources, owned pods and services, VMIs through their VM or their claims, certificate rotation', () => {
    const map = exportMapper();
    const keys = (t: { key: string }[]) => t.map((x) => x.key).sort();
    assert.deepEqual(keys(map('VirtualMachineExport', 'ADDED', exp('e-pvc', { kind: 'PersistentVolumeClaim', name: 'disk' }))), ['ns/e-pvc']);
    map('VirtualMachineExport', 'ADDED', exp('e-v1', { apiGroup: 'v1', kind: 'PersistentVolumeClaim', name: 'disk' }));
    map('VirtualMachineExport', 'ADDED', exp('e-vm', { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'vm' }));
    map('VirtualMachineExport', 'ADDED', exp('e-snap', { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot', name: 's' }));
    assert.deepEqual(keys(map('PersistentVolumeClaim', 'MODIFIED', { metadata: { name: 'disk', namespace: 'ns' } })), ['ns/e-pvc', 'ns/e-v1'], 'the index accepts the group v1');
    assert.deepEqual(keys(map('PersistentVolumeClaim', 'MODIFIED', { metadata: { name: 'disk', namespace: 'other' } })), []);
    assert.deepEqual(keys(map('VirtualMachine', 'MODIFIED', { metadata: { name: 'vm', namespace: 'ns' } })), ['ns/e-vm']);
    assert.deepEqual(keys(map('VirtualMachineSnapshot', 'MODIFIED', { metadata: { name: 's', namespace: 'ns' } })), ['ns/e-snap']);
    const owned = { metadata: { name: 'virt-export-e-vm', namespace: 'ns', ownerReferences: [{ apiVersion: 'export.kubevirt.io/v1', kind: 'VirtualMachineExport', name: 'e-vm', uid: 'u', controller: true }] } };
    assert.deepEqual(keys(map('Pod', 'MODIFIED', owned)), ['ns/e-vm']);
    assert.deepEqual(keys(map('Service', 'DELETED', owned)), ['ns/e-vm']);
    const vmi = { metadata: { name: 'vm', namespace: 'ns', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm', uid: 'u', controller: true }] }, spec: {} };
    assert.deepEqual(keys(map('VirtualMachineInstance', 'DELETED', vmi)), ['ns/e-vm']);
    assert.deepEqual(keys(map('VirtualMachineInstance', 'MODIFIED', { metadata: { name: 'bare', namespace: 'ns' }, spec: { volumes: [{ persistentVolumeClaim: { claimName: 'disk' } }] } })), ['ns/e-pvc', 'ns/e-v1']);
    const kv = (d: string) => ({ metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { certificateRotateStrategy: { selfSigned: { server: { duration: d } } } } });
    assert.deepEqual(keys(map('KubeVirt', 'MODIFIED', kv('24h'), kv('24h'))), []);
    assert.deepEqual(keys(map('KubeVirt', 'MODIFIED', kv('48h'), kv('24h'))), ['ns/e-pvc', 'ns/e-snap', 'ns/e-v1', 'ns/e-vm']);
    assert.deepEqual(map('VirtualMachineExport', 'DELETED', exp('e-pvc', { kind: 'PersistentVolumeClaim', name: 'disk' })), [], 'deletes are ignored');
    assert.deepEqual(keys(map('PersistentVolumeClaim', 'MODIFIED', { metadata: { name: 'disk', namespace: 'ns' } })), ['ns/e-v1']);
  });
});

describe('export relay mapping: Ingresses to the export proxy, backups', () => {
  const exp = (name: string, source: Record<string, unknown>) => ({ metadata: { name, namespace: 'ns' }, spec: { source } });
  const ingress = (name: string, namespace: string, service: string, rv = '1') => ({ metadata: { name, namespace, resourceVersion: rv }, spec: { rules: [{ host: `${name}.example.com`, http: { paths: [{ backend: { service: { name: service } } }] } }] } });
  const keys = (t: { key: string }[]) => t.map((x) => x.key).sort();
  const withExports = () => {
    const map = exportMapper();
    map('VirtualMachineExport', 'ADDED', exp('e-vm', { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'vm' }));
    map('VirtualMachineExport', 'ADDED', exp('e-bk', { apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackup', name: 'b1' }));
    return map;
  };
  const all = ['ns/e-bk', 'ns/e-vm'];

  const table: { name: string; events: [string, 'ADDED' | 'MODIFIED' | 'DELETED' | 'RELIST', object, object?][]; want: string[] }[] = [
    { name: 'a new Ingress to the proxy in KubeVirt\'s namespace: every export', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'virt-exportproxy')]], want: all },
    { name: 'one to another service: none', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'web')]], want: [] },
    { name: 'one in another namespace: none', events: [['Ingress', 'ADDED', ingress('i', 'apps', 'virt-exportproxy')]], want: [] },
    { name: 'KubeVirt installed elsewhere: its namespace counts, not kubevirt', events: [['KubeVirt', 'ADDED', { metadata: { name: 'kv', namespace: 'kv-ns' }, spec: {} }], ['Ingress', 'ADDED', ingress('i', 'kv-ns', 'virt-exportproxy')]], want: all },
    { name: 'one that stops routing to the proxy: every export (the link goes)', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'virt-exportproxy')], ['Ingress', 'MODIFIED', ingress('i', 'kubevirt', 'web', '2')]], want: all },
    { name: 'then changes again, still elsewhere: none', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'virt-exportproxy')], ['Ingress', 'MODIFIED', ingress('i', 'kubevirt', 'web', '2')], ['Ingress', 'MODIFIED', ingress('i', 'kubevirt', 'web2', '3')]], want: [] },
    { name: 'deleted: every export', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'virt-exportproxy')], ['Ingress', 'DELETED', ingress('i', 'kubevirt', 'virt-exportproxy')]], want: all },
    { name: 'a relist of the same version: none', events: [['Ingress', 'ADDED', ingress('i', 'kubevirt', 'virt-exportproxy')], ['Ingress', 'RELIST', ingress('i', 'kubevirt', 'virt-exportproxy'), ingress('i', 'kubevirt', 'virt-exportproxy')]], want: [] },
    { name: 'a relist of a newer version (a change the watch missed): every export', events: [['Ingress', 'RELIST', ingress('i', 'kubevirt', 'virt-exportproxy', '5'), ingress('i', 'kubevirt', 'web', '4')]], want: all },
    { name: 'a VirtualMachineBackup: the exports of it', events: [['VirtualMachineBackup', 'MODIFIED', { metadata: { name: 'b1', namespace: 'ns' } }]], want: ['ns/e-bk'] },
    { name: 'another backup: none', events: [['VirtualMachineBackup', 'MODIFIED', { metadata: { name: 'b2', namespace: 'ns' } }]], want: [] },
  ];
  for (const row of table) {
    test(row.name, () => {
      // arrange
      const map = withExports();
      // act: the last event's keys
      let got: { key: string }[] = [];
      for (const [kind, type, obj, old] of row.events) got = map(kind, type, obj as never, old as never);
      // assert
      assert.deepEqual(keys(got), row.want);
    });
  }

  test('a source kind that does not match its group is in no bucket (KubeVirt\'s indexers check both)', () => {
    // arrange
    const map = exportMapper();
    map('VirtualMachineExport', 'ADDED', exp('odd', { apiGroup: 'kubevirt.io', kind: 'VirtualMachineInstance', name: 'vm' }));
    // act / assert
    assert.deepEqual(map('VirtualMachine', 'MODIFIED', { metadata: { name: 'vm', namespace: 'ns' } }), []);
  });
});
