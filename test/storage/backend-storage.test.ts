/** Backend storage's pure rules (reference-vm-vmi-depth §2), table-driven. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { backendClassAndMode, backendPvcFor, backendPvcReadiness, backendStorageNeeded, renderBackendPvc } from '../../shared/storage/backend-storage.ts';

const vmi = (devices: Record<string, unknown> = {}, firmware?: unknown, status?: unknown): VirtualMachineInstance =>
  ({ metadata: { name: 'x', namespace: 'ns', uid: 'u' }, spec: { domain: { devices, ...(firmware ? { firmware } : {}) } }, ...(status ? { status } : {}) }) as VirtualMachineInstance;
const sc = (name: string, mode = 'Immediate', annotations: Record<string, string> = {}): V1StorageClass => ({ metadata: { name, annotations }, provisioner: 'p', volumeBindingMode: mode });
const pvc = (name: string, phase?: string, over: Partial<V1PersistentVolumeClaim['metadata']> = {}, className?: string): V1PersistentVolumeClaim => ({ metadata: { name, ...over }, spec: className ? { storageClassName: className } : {}, ...(phase ? { status: { phase } } : {}) });

describe('backend storage', () => {
  test('table: when it is needed', () => {
    const cases: [string, VirtualMachineInstance, boolean][] = [
      ['nothing', vmi(), false],
      ['a TPM, not persistent', vmi({ tpm: {} }), false],
      ['a persistent TPM', vmi({ tpm: { persistent: true } }), true],
      ['a persistent TPM, disabled', vmi({ tpm: { persistent: true, enabled: false } }), false],
      ['a persistent EFI', vmi({}, { bootloader: { efi: { persistent: true } } }), true],
      ['CBT Enabled', vmi({}, undefined, { changedBlockTracking: { state: 'Enabled' } }), true],
      ['CBT Disabled', vmi({}, undefined, { changedBlockTracking: { state: 'Disabled' } }), false],
    ];
    for (const [name, v, want] of cases) assert.equal(backendStorageNeeded(v), want, name);
  });

  test("which PVC is the VMI's: the labelled one, else the legacy name; never one being deleted", () => {
    const labelled = pvc('persistent-state-for-x-abc', 'Bound', { labels: { 'persistent-state-for': 'x' } });
    const legacy = pvc('persistent-state-for-x', 'Bound');
    const deleting = pvc('persistent-state-for-x-old', 'Bound', { labels: { 'persistent-state-for': 'x' }, deletionTimestamp: new Date() });
    assert.equal(backendPvcFor('x', [legacy, deleting, labelled])?.metadata?.name, 'persistent-state-for-x-abc');
    assert.equal(backendPvcFor('x', [legacy, deleting])?.metadata?.name, 'persistent-state-for-x');
    assert.equal(backendPvcFor('x', [deleting]), undefined);
  });

  test('table: readiness', () => {
    const classes = [sc('fast'), sc('late', 'WaitForFirstConsumer')];
    const cases: [string, V1PersistentVolumeClaim, unknown][] = [
      ['Bound', pvc('a', 'Bound'), { ready: true }],
      ['Lost', pvc('a', 'Lost'), { ready: false, error: 'backend storage PVC lost' }],
      ['Pending on WFFC', pvc('a', 'Pending', {}, 'late'), { ready: true }],
      ['Pending on Immediate', pvc('a', 'Pending', {}, 'fast'), { ready: false }],
      ['Pending, no class', pvc('a', 'Pending'), { ready: false, error: 'no storage class name' }],
      ['Pending, class gone', pvc('a', 'Pending', {}, 'gone'), { ready: false, error: 'storage class gone not found' }],
    ];
    for (const [name, p, want] of cases) assert.deepEqual(backendPvcReadiness(p, classes), want, name);
  });

  test('table: storage class and access mode', () => {
    const virtDefault = sc('virt', 'Immediate', { 'storageclass.kubevirt.io/is-default-virt-class': 'true' });
    const k8sDefault = sc('std', 'Immediate', { 'storageclass.kubernetes.io/is-default-class': 'true' });
    const rwx = { metadata: { name: 'std' }, status: { claimPropertySets: [{ volumeMode: 'Filesystem', accessModes: ['ReadWriteMany'] }] } };
    const blockOnly = { metadata: { name: 'std' }, status: { claimPropertySets: [{ volumeMode: 'Block', accessModes: ['ReadWriteMany'] }] } };
    const cases: [string, string, V1StorageClass[], unknown[], unknown][] = [
      ['vmStateStorageClass: RWX by default', 'mine', [], [], { className: 'mine', accessMode: 'ReadWriteMany' }],
      ['the virt default wins over the Kubernetes one: RWO', '', [k8sDefault, virtDefault], [], { className: 'virt', accessMode: 'ReadWriteOnce' }],
      ['the Kubernetes default, its profile offers RWX', '', [k8sDefault], [rwx], { className: 'std', accessMode: 'ReadWriteMany' }],
      ['a Block-only profile does not count', '', [k8sDefault], [blockOnly], { className: 'std', accessMode: 'ReadWriteOnce' }],
      ['no default class', '', [sc('plain')], [], { error: 'no default storage class found' }],
    ];
    for (const [name, cls, classes, profiles, want] of cases) assert.deepEqual(backendClassAndMode(cls, classes, profiles as never), want, name);
  });

  test("the PVC: generateName, labels, the VMI's owners (else the VMI), 10Mi Filesystem; 522Mi with CBT", () => {
    const owned = { ...vmi({ tpm: { persistent: true } }), metadata: { name: 'x', namespace: 'ns', uid: 'u', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'x', uid: 'vm-u', controller: true }] } } as VirtualMachineInstance;
    const p = renderBackendPvc(owned, 'std', 'ReadWriteOnce');
    assert.equal(p.metadata?.generateName, 'persistent-state-for-x-');
    assert.deepEqual(p.metadata?.labels, { 'persistent-state-for': 'x', 'cdi.kubevirt.io/applyStorageProfile': 'true' });
    assert.equal(p.metadata?.ownerReferences?.[0]?.uid, 'vm-u');
    assert.deepEqual([p.spec?.resources?.requests?.storage, p.spec?.volumeMode, p.spec?.storageClassName, p.spec?.accessModes], ['10Mi', 'Filesystem', 'std', ['ReadWriteOnce']]);
    const bare = renderBackendPvc(vmi({}, undefined, { changedBlockTracking: { state: 'Initializing' } }), 'std', 'ReadWriteOnce');
    assert.deepEqual([bare.metadata?.ownerReferences?.[0]?.kind, bare.spec?.resources?.requests?.storage], ['VirtualMachineInstance', '522Mi']);
  });
});
