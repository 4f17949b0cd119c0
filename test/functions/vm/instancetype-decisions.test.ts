import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InstancetypeMatcher, InstancetypeStatusRef, VirtualMachine } from '../../../shared/api/index.ts';
import { kindTarget } from '../../../shared/instancetype/kinds.ts';
import { buildRevision, decodeRevision, needsUpgrade, revisionName } from '../../../shared/instancetype/revision.ts';
import { nextStatusRef } from '../../../functions/vm/instancetype/store.ts';

describe('kindTarget: a matcher kind, lowercased', () => {
  const cases: [string, 'instancetype' | 'preference', string | undefined, string][] = [
    ['empty → cluster instance type', 'instancetype', undefined, 'virtualmachineclusterinstancetypes'],
    ['singular', 'instancetype', 'VirtualMachineInstancetype', 'virtualmachineinstancetypes'],
    ['plural, lower case', 'instancetype', 'virtualmachineinstancetypes', 'virtualmachineinstancetypes'],
    ['cluster plural', 'instancetype', 'VirtualMachineClusterInstancetypes', 'virtualmachineclusterinstancetypes'],
    ['empty → cluster preference', 'preference', '', 'virtualmachineclusterpreferences'],
    ['namespaced preference', 'preference', 'virtualmachinepreference', 'virtualmachinepreferences'],
    ['a preference kind on an instance type matcher', 'instancetype', 'VirtualMachinePreference', 'got unexpected kind in InstancetypeMatcher: VirtualMachinePreference'],
    ['anything else', 'preference', 'Pod', 'got unexpected kind in PreferenceMatcher: Pod'],
  ];
  for (const [name, flavour, kind, want] of cases) {
    test(name, () => {
      // act
      const got = kindTarget(flavour, kind);
      // assert
      assert.equal(got.ok ? got.res.plural : got.message, want);
    });
  }
});

describe('nextStatusRef: Store', () => {
  const pinned: InstancetypeStatusRef = { name: 'a', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: 'vm-a-v1beta1-u-1' } };
  const cases: [string, InstancetypeMatcher, InstancetypeStatusRef | undefined, InstancetypeStatusRef, boolean][] = [
    ['no ref yet → copied, a revision is needed', { name: 'a', kind: 'VirtualMachineClusterInstancetype' }, undefined, { name: 'a', kind: 'VirtualMachineClusterInstancetype' }, true],
    ['same matcher → unchanged, pinned', { name: 'a', kind: 'VirtualMachineClusterInstancetype' }, pinned, pinned, false],
    ['a new name unpins', { name: 'b', kind: 'VirtualMachineClusterInstancetype' }, pinned, { name: 'b', kind: 'VirtualMachineClusterInstancetype' }, true],
    ['a new kind unpins', { name: 'a', kind: 'VirtualMachineInstancetype' }, pinned, { name: 'a', kind: 'VirtualMachineInstancetype' }, true],
    ['revisionName pins without creating', { name: 'a', kind: 'VirtualMachineClusterInstancetype', revisionName: 'mine' }, undefined, { name: 'a', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: 'mine' } }, false],
    ['the failure policy is copied', { name: 'a', kind: 'VirtualMachineClusterInstancetype', inferFromVolumeFailurePolicy: 'IgnoreInferFromVolumeFailure' }, pinned, { ...pinned, inferFromVolumeFailurePolicy: 'IgnoreInferFromVolumeFailure' }, false],
  ];
  for (const [name, matcher, ref, want, needs] of cases) {
    test(name, () => {
      // act
      const got = nextStatusRef(matcher, ref);
      // assert
      assert.deepEqual(got.ref, want);
      assert.equal(got.needsRevision, needs);
    });
  }
});

describe('revisions: name, stored object, decode, upgrade need', () => {
  const vm: VirtualMachine = { metadata: { name: 'vm1', namespace: 'ns', uid: 'vm-uid' }, spec: { template: {} } };
  const obj = { metadata: { name: 'it1', uid: '9160e5de', generation: 3, labels: { a: 'b' }, annotations: { c: 'd' }, finalizers: ['f'], ownerReferences: [], managedFields: [], resourceVersion: '7' }, spec: { cpu: { guest: 1 }, memory: { guest: '1Gi' } } };

  test('<vm>-<object>-v1beta1-<uid>-<generation>, labels, controller ref, stripped data', () => {
    // act
    const cr = buildRevision(vm, obj, 'VirtualMachineClusterInstancetype');
    // assert
    assert.equal(revisionName('vm1', obj), 'vm1-it1-v1beta1-9160e5de-3');
    assert.equal(cr.metadata.name, 'vm1-it1-v1beta1-9160e5de-3');
    assert.equal(cr.revision, 0);
    assert.deepEqual(cr.data, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name: 'it1', uid: '9160e5de', generation: 3, resourceVersion: '7' }, spec: obj.spec });
    assert.equal(needsUpgrade(cr), false);
  });

  const decodeCases: [string, object, Record<string, string>, 'instancetype' | 'preference', string | boolean][] = [
    ['v1beta1 object', { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'x' }, spec: {} }, {}, 'instancetype', true],
    ['v1alpha1 object converts', { apiVersion: 'instancetype.kubevirt.io/v1alpha1', kind: 'VirtualMachinePreference', metadata: { name: 'x' }, spec: {} }, {}, 'preference', true],
    ['the oldest spec-revision form (base64 spec, kind from the labels)', { apiVersion: 'instancetype.kubevirt.io/v1alpha1', spec: Buffer.from('{"cpu":{"guest":1}}').toString('base64') }, { 'instancetype.kubevirt.io/object-kind': 'VirtualMachineInstancetype', 'instancetype.kubevirt.io/object-name': 'x' }, 'instancetype', true],
    ['a preference in an instance type slot', { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachinePreference', spec: {} }, {}, 'instancetype', 'unexpected type in ControllerRevision: instancetype.kubevirt.io/v1beta1, Kind=VirtualMachinePreference'],
    ['something else entirely', { apiVersion: 'v1', kind: 'Pod', spec: {} }, {}, 'instancetype', 'unexpected type in ControllerRevision: v1, Kind=Pod'],
  ];
  for (const [name, data, labels, flavour, want] of decodeCases) {
    test(`decode: ${name}`, () => {
      // act
      const got = decodeRevision({ metadata: { name: 'r', labels }, data, revision: 0 }, flavour);
      // assert
      assert.equal(got.ok ? true : got.message, want);
      if (got.ok) assert.equal(got.object.apiVersion, 'instancetype.kubevirt.io/v1beta1');
    });
  }

  test('a revision without the v1beta1 version label needs upgrading', () => {
    // act + assert
    assert.equal(needsUpgrade({ metadata: { labels: { 'instancetype.kubevirt.io/object-version': 'v1alpha2' } }, revision: 0 }), true);
    assert.equal(needsUpgrade({ metadata: {}, revision: 0 }), true);
  });
});
