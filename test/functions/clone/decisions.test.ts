/** The clone controller's pure decisions, table-driven: filters, patches, checks, names, the status walk, the relay mapping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentProblem, liveVmNeedsBackendStorage, volumeSnapshotProblems } from '../../../functions/clone/checks.ts';
import { keysToRemove } from '../../../functions/clone/filters.ts';
import { generatedTargetName, randomSuffix } from '../../../functions/clone/names.ts';
import { clonePatches } from '../../../functions/clone/patches.ts';
import { cloneMapper } from '../../../functions/clone/wakes.ts';
import { renderRestore, renderSnapshot } from '../../../functions/clone/render.ts';
import { computeCloneStatus, type PassResult } from '../../../functions/clone/status.ts';
import type { VirtualMachineClone } from '../../../shared/api/snapshot.ts';

const clone = (spec: NonNullable<VirtualMachineClone['spec']> = {}, status?: VirtualMachineClone['status']): VirtualMachineClone => ({
  metadata: { name: 'c', namespace: 'ns', uid: 'u1' },
  spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src' }, target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'dst' }, ...spec },
  ...(status ? { status } : {}),
});

describe('clone filters (unanchored regular expressions)', () => {
  const map = { app: 'a', 'prefix1/x': '1', 'prefix2/y': '2', other: 'o', 'ex~ample': 'e' };
  const cases = [
    { name: 'nil: keep everything', filters: undefined, removed: [] },
    { name: 'empty list: remove every key', filters: [], removed: ['app', 'ex~ample', 'other', 'prefix1/x', 'prefix2/y'] },
    { name: 'a lone * keeps all', filters: ['*'], removed: [] },
    { name: "prefix* means 'contains prefi'", filters: ['prefix*'], removed: ['app', 'ex~ample', 'other'] },
    { name: 'a negation removes what it matches even when kept', filters: ['*', '!prefix2/*'], removed: ['prefix2/y'] },
    { name: 'unanchored: "pp" keeps app', filters: ['pp'], removed: ['ex~ample', 'other', 'prefix1/x', 'prefix2/y'] },
    { name: 'only negations keep nothing', filters: ['!app'], removed: ['app', 'ex~ample', 'other', 'prefix1/x', 'prefix2/y'] },
    { name: 'an invalid pattern matches nothing', filters: ['*', '!('], removed: [] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(keysToRemove(map, c.filters), c.removed));
  test('exempt keys stay', () => assert.deepEqual(keysToRemove({ a: '1', b: '2' }, [], ['b']), ['a']));
});

describe('clone patches (reference §3.3 order)', () => {
  const vm = {
    metadata: { labels: { keep: '1', drop: '2' }, annotations: { 'restore.kubevirt.io/lastRestoreUID': 'r', 'note/x': 'n' } },
    spec: {
      template: {
        metadata: { labels: { 'kubevirt.io/vm': 'src', tmp: 't' }, annotations: { 'restore.kubevirt.io/lastRestoreUID': 'r' } },
        spec: { domain: { devices: { interfaces: [{ name: 'default' }, { name: 'second' }] }, firmware: { serial: 'old', uuid: 'u' } } },
      },
    },
  };
  test('MACs, serial, VM and template removals, uuid, then the user patches', () => {
    // arrange
    const c = clone({ newMacAddresses: { default: '02:00:00:00:00:01' }, newSMBiosSerial: 'sn-1', labelFilters: ['keep'], annotationFilters: [], template: { labelFilters: ['kubevirt.io/*'], annotationFilters: [] }, patches: ['{"op":"add","path":"/metadata/labels/x","value":"y"}'] });
    // act
    const got = clonePatches(c, vm);
    // assert
    assert.deepEqual(got, [
      '{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"02:00:00:00:00:01"}',
      '{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/1/macAddress","value":""}',
      '{"op":"replace","path":"/spec/template/spec/domain/firmware/serial","value":"sn-1"}',
      '{"op":"remove","path":"/metadata/labels/drop","value":null}',
      '{"op":"remove","path":"/metadata/annotations/note~1x","value":null}',
      '{"op":"remove","path":"/spec/template/metadata/labels/tmp","value":null}',
      // the template's lastRestoreUID is not exempt (quirk Q-C5)
      '{"op":"remove","path":"/spec/template/metadata/annotations/restore.kubevirt.io~1lastRestoreUID","value":null}',
      '{"op":"replace","path":"/spec/template/spec/domain/firmware/uuid","value":""}',
      '{"op":"add","path":"/metadata/labels/x","value":"y"}',
    ]);
  });
  test('no firmware: no serial or uuid; no filters: no removals', () => {
    const got = clonePatches(clone(), { spec: { template: { spec: { domain: { devices: { interfaces: [{ name: 'default' }] } } } } } });
    assert.deepEqual(got, ['{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":""}']);
  });
});

describe('clone source checks', () => {
  const withVolumes = (statuses: { name: string; enabled: boolean }[] | undefined) => ({
    spec: { template: { spec: { volumes: [{ name: 'root', containerDisk: {} }, { name: 'disk', persistentVolumeClaim: { claimName: 'c' } }, { name: 'dv', dataVolume: { name: 'd' } }] } } },
    ...(statuses ? { status: { volumeSnapshotStatuses: statuses } } : {}),
  });
  const cases = [
    { name: 'no statuses yet: both claim volumes unknown', vm: withVolumes(undefined), want: ['Virtual Machine volume disk snapshot support unknown', 'Virtual Machine volume dv snapshot support unknown'] },
    { name: 'one disabled', vm: withVolumes([{ name: 'disk', enabled: true }, { name: 'dv', enabled: false }]), want: ['Virtual Machine volume dv does not support snapshots'] },
    { name: 'all enabled', vm: withVolumes([{ name: 'disk', enabled: true }, { name: 'dv', enabled: true }]), want: [] },
  ];
  for (const c of cases) test(`volume snapshots: ${c.name}`, () => assert.deepEqual(volumeSnapshotProblems(c.vm as never), c.want));
  const backend = [
    { name: 'persistent TPM', vm: { spec: { template: { spec: { domain: { devices: { tpm: { persistent: true } } } } } } }, want: true },
    { name: 'persistent EFI', vm: { spec: { template: { spec: { domain: { firmware: { bootloader: { efi: { persistent: true } } } } } } } }, want: true },
    { name: 'CBT Initializing', vm: { status: { changedBlockTracking: { state: 'Initializing' } } }, want: true },
    { name: 'CBT Disabled', vm: { status: { changedBlockTracking: { state: 'Disabled' } } }, want: false },
    { name: 'nothing', vm: {}, want: false },
  ];
  for (const c of backend) test(`backend storage: ${c.name}`, () => assert.equal(liveVmNeedsBackendStorage(c.vm as never), c.want));

  const snapshot = { metadata: { name: 's', namespace: 'ns', uid: 'su' }, status: { readyToUse: true } };
  const contentVm = (domain: Record<string, unknown> = {}) => ({ spec: { template: { spec: { domain, volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: 'c' } }, { name: 'd2', dataVolume: { name: 'x' } }] } } } });
  const contentCases = [
    { name: 'missing', content: undefined, want: 'snapshot content vmsnapshot-content-su in namespace ns does not exist' },
    { name: 'no snapshot name', content: { spec: {} }, want: 'cannot get snapshot name from content vmsnapshot-content-su' },
    { name: 'no template: fine', content: { spec: { virtualMachineSnapshotName: 's', source: { virtualMachine: { spec: {} } } } }, want: undefined },
    { name: 'backend storage', content: { spec: { virtualMachineSnapshotName: 's', source: { virtualMachine: contentVm({ devices: { tpm: { persistent: true } } }) } } }, want: 'Clone of source with backendstorage is not supported: snapshot ns/s' },
    { name: 'volumes not backed up, joined', content: { spec: { virtualMachineSnapshotName: 's', source: { virtualMachine: contentVm() }, volumeBackups: [] } }, want: 'volume disk is not backed up in snapshot s\nvolume d2 is not backed up in snapshot s' },
    { name: 'all backed up', content: { spec: { virtualMachineSnapshotName: 's', source: { virtualMachine: contentVm() }, volumeBackups: [{ volumeName: 'disk' }, { volumeName: 'd2' }] } }, want: undefined },
  ];
  for (const c of contentCases) test(`content: ${c.name}`, () => assert.equal(contentProblem(snapshot, c.content as never), c.want));
});

describe('clone names and objects', () => {
  test('random suffix: apimachinery alphabet', () => {
    assert.equal(randomSuffix(5, () => 0), 'bbbbb');
    assert.equal(randomSuffix(3, () => 0.999), '999');
  });
  const cases = [
    { name: 'short source', source: 'vm', want: 'vm-clone-bbbbb' },
    { name: '<source>-clone over 252 characters', source: 'x'.repeat(247), want: 'clone-object-bbbbb' },
    { name: '<source>-clone at 252 characters', source: 'x'.repeat(246), want: `${'x'.repeat(246)}-clone-bbbbb` },
  ];
  for (const c of cases) test(`target name: ${c.name}`, () => assert.equal(generatedTargetName(c.source, () => 0), c.want));
  test('the snapshot: tmp-snapshot-<uid>, owned by the clone, nothing else', () => {
    assert.deepEqual(renderSnapshot(clone(), 'src', 'ns'), {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshot',
      metadata: { name: 'tmp-snapshot-u1', namespace: 'ns', ownerReferences: [{ apiVersion: 'clone.kubevirt.io/v1beta1', kind: 'VirtualMachineClone', name: 'c', uid: 'u1', controller: true, blockOwnerDeletion: true }] },
      spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src' } },
    });
  });
  const policies = [
    { policy: undefined, want: undefined },
    { policy: 'PrefixTargetName', want: 'PrefixTargetName' },
    { policy: 'RandomizeNames', want: 'RandomizeNames' },
    { policy: 'Other', want: 'RandomizeNames' },
  ];
  for (const p of policies) {
    test(`the restore: volumeNamePolicy ${p.policy} → volumeRestorePolicy ${p.want}`, () => {
      const r = renderRestore(clone(p.policy ? { volumeNamePolicy: p.policy } : {}), 'tmp-snapshot-u1', { metadata: { name: 'src' } });
      assert.equal(r.metadata?.name, 'tmp-restore-u1');
      assert.equal(r.spec?.volumeRestorePolicy, p.want);
      assert.deepEqual(r.spec?.target, { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'dst' });
      assert.equal(r.spec?.virtualMachineSnapshotName, 'tmp-snapshot-u1');
    });
  }
  test('the restore: a target without a name gets <content VM>-clone-<5>', () => {
    const c = clone({ target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine' } });
    assert.equal(renderRestore(c, 's', { metadata: { name: 'orig' } }, () => 0).spec?.target?.name, 'orig-clone-bbbbb');
  });
});

describe('clone status walk (reference §3.4)', () => {
  const now = '2026-03-01T12:00:00.000Z';
  const conds = (st: ReturnType<typeof computeCloneStatus>) => (st.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`);
  const cases: { name: string; status?: VirtualMachineClone['status']; r: PassResult; phase: string; conditions: string[]; names?: Record<string, unknown> }[] = [
    { name: 'pending keeps the unset phase', r: { pending: { event: 'SourceDoesNotExist', reason: 'Source doesnt exist: VirtualMachine ns/src' } }, phase: '', conditions: ['Progressing=False Pending', 'Ready=False Source doesnt exist: VirtualMachine ns/src'] },
    { name: 'a created snapshot: SnapshotInProgress with its name', r: { snapshotName: 'tmp-snapshot-u1' }, phase: 'SnapshotInProgress', conditions: ['Progressing=True Still processing', 'Ready=False Still processing'], names: { snapshotName: 'tmp-snapshot-u1' } },
    { name: 'snapshot ready and restore created in one pass', status: { phase: 'SnapshotInProgress', snapshotName: 's' }, r: { snapshotReady: true, restoreName: 'r' }, phase: 'RestoreInProgress', conditions: ['Progressing=True Still processing', 'Ready=False Still processing'], names: { snapshotName: 's', restoreName: 'r' } },
    { name: 'a snapshot source: unset → RestoreInProgress in one write', r: { snapshotReady: true, restoreName: 'r' }, phase: 'RestoreInProgress', conditions: ['Progressing=True Still processing', 'Ready=False Still processing'], names: { restoreName: 'r' } },
    { name: 'restore done, target there, claims bound: Succeeded, names gone', status: { phase: 'RestoreInProgress', snapshotName: 's', restoreName: 'r' }, r: { restoreReady: true, targetVmName: 'dst', targetVmCreated: true, pvcBound: true }, phase: 'Succeeded', conditions: ['Progressing=False Ready', 'Ready=True Ready'], names: { targetName: 'dst' } },
    { name: 'failing', status: { phase: 'RestoreInProgress' }, r: { failing: { event: 'SnapshotDeleted', reason: 'snapshot s does not exist anymore' } }, phase: 'Failed', conditions: ['Progressing=False Failed', 'Ready=False snapshot s does not exist anymore'] },
    { name: 'a Failed clone reconciled again: still processing, still Failed (Q-C1)', status: { phase: 'Failed' }, r: {}, phase: 'Failed', conditions: ['Progressing=True Still processing', 'Ready=False Still processing'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const st = computeCloneStatus(c.status, c.r, now);
      // assert
      assert.equal(st.phase ?? '', c.phase);
      assert.deepEqual(conds(st), c.conditions);
      const names = Object.fromEntries(Object.entries({ snapshotName: st.snapshotName, restoreName: st.restoreName, targetName: st.targetName }).filter(([, v]) => v !== undefined));
      assert.deepEqual(names, c.names ?? {});
    });
  }
  test('a condition keeps its time while status and reason hold', () => {
    const first = computeCloneStatus(undefined, { snapshotName: 's' }, now);
    const again = computeCloneStatus(first, {}, '2026-03-01T13:00:00.000Z');
    assert.deepEqual(again.conditions, first.conditions);
  });
});

describe('clone relay mapping', () => {
  const keysOf = (m: ReturnType<typeof cloneMapper>, ...a: Parameters<ReturnType<typeof cloneMapper>>) => m(...a).map((t) => `${t.controller} ${t.key}`);
  const cl = (name: string, spec: Record<string, unknown>, status?: Record<string, unknown>) => ({ metadata: { name, namespace: 'ns' }, spec, ...(status ? { status } : {}) });
  const vmSrc = { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src' }, target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'dst' } };
  test('indexes follow the clone; each kind maps as §3.1 says', () => {
    // arrange
    const m = cloneMapper();
    m('VirtualMachineClone', 'ADDED', cl('a', vmSrc, { phase: 'SnapshotInProgress', snapshotName: 'tmp-snapshot-1' }));
    m('VirtualMachineClone', 'ADDED', cl('b', { source: { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot', name: 'user-snap' } }, { phase: 'RestoreInProgress', restoreName: 'tmp-restore-2' }));
    m('VirtualMachineClone', 'ADDED', cl('c', vmSrc, { phase: 'Succeeded', restoreName: 'tmp-restore-3' }));
    const owned = { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ apiVersion: 'clone.kubevirt.io/v1beta1', kind: 'VirtualMachineClone', name: 'z', controller: true }] } };
    // act / assert
    assert.deepEqual(keysOf(m, 'VirtualMachineSnapshot', 'MODIFIED', { metadata: { name: 'tmp-snapshot-1', namespace: 'ns' } }), ['clone ns/a']);
    assert.deepEqual(keysOf(m, 'VirtualMachineSnapshot', 'MODIFIED', { metadata: { name: 'user-snap', namespace: 'ns' } }), ['clone ns/b']);
    assert.deepEqual(keysOf(m, 'VirtualMachineSnapshot', 'DELETED', owned), ['clone ns/z']);
    assert.deepEqual(keysOf(m, 'VirtualMachineRestore', 'MODIFIED', { metadata: { name: 'tmp-restore-2', namespace: 'ns' } }), ['clone ns/b']);
    assert.deepEqual(keysOf(m, 'VirtualMachineRestore', 'ADDED', owned), ['clone ns/z']);
    const pvc = (phase: string) => ({ metadata: { name: 'p', namespace: 'ns', annotations: { 'restore.kubevirt.io/name': 'tmp-restore-3' } }, status: { phase } });
    assert.deepEqual(keysOf(m, 'PersistentVolumeClaim', 'MODIFIED', pvc('Bound')), ['clone ns/c']);
    assert.deepEqual(keysOf(m, 'PersistentVolumeClaim', 'MODIFIED', pvc('Pending')), []);
    assert.deepEqual(keysOf(m, 'VirtualMachine', 'ADDED', { metadata: { name: 'src', namespace: 'ns' } }), ['clone ns/a', 'clone ns/c']);
    const vm = (st: unknown) => ({ metadata: { name: 'src', namespace: 'ns' }, status: { volumeSnapshotStatuses: st } as Record<string, unknown> });
    assert.deepEqual(keysOf(m, 'VirtualMachine', 'MODIFIED', vm([{ name: 'd', enabled: true }]), vm([{ name: 'd', enabled: true }])), [], 'unchanged volumeSnapshotStatuses');
    assert.deepEqual(keysOf(m, 'VirtualMachine', 'MODIFIED', vm([{ name: 'd', enabled: true }]), vm(undefined)), ['clone ns/a', 'clone ns/c']);
    assert.deepEqual(keysOf(m, 'VirtualMachine', 'DELETED', { metadata: { name: 'dst', namespace: 'ns' } }), ['clone ns/a', 'clone ns/c']);
    m('VirtualMachineClone', 'DELETED', cl('a', vmSrc));
    assert.deepEqual(keysOf(m, 'VirtualMachine', 'DELETED', { metadata: { name: 'dst', namespace: 'ns' } }), ['clone ns/c']);
  });
});
