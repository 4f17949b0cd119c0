import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LabelSelector, VirtualMachineInstance } from '../../shared/api/index.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { selectorMatches, selectorString, validateSelector } from '../../shared/predicates/label-selector.ts';
import { adoptPatch, controllerOf, controllerRef, isControlledByUid, releasePatch } from '../../shared/predicates/owner-refs.ts';
import { isVmiDeleting, isVmiFinal, isVmiReady, isVmiUnknown } from '../../shared/predicates/vmis.ts';

describe('label selectors', () => {
  const cases: { name: string; selector: LabelSelector | undefined; labels: Record<string, string>; matches: boolean; text: string }[] = [
    { name: 'nil matches nothing', selector: undefined, labels: { a: '1' }, matches: false, text: '' },
    { name: 'empty matches everything', selector: {}, labels: { a: '1' }, matches: true, text: '' },
    { name: 'matchLabels equal', selector: { matchLabels: { a: '1' } }, labels: { a: '1', b: '2' }, matches: true, text: 'a=1' },
    { name: 'matchLabels differ', selector: { matchLabels: { a: '1' } }, labels: { a: '2' }, matches: false, text: 'a=1' },
    { name: 'In', selector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['2', '1'] }] }, labels: { a: '1' }, matches: true, text: 'a in (1,2)' },
    { name: 'In without the key', selector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, labels: {}, matches: false, text: 'a in (1)' },
    { name: 'NotIn without the key', selector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, labels: {}, matches: true, text: 'a notin (1)' },
    { name: 'NotIn with the value', selector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, labels: { a: '1' }, matches: false, text: 'a notin (1)' },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, labels: { a: '' }, matches: true, text: 'a' },
    { name: 'DoesNotExist', selector: { matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, labels: { a: 'x' }, matches: false, text: '!a' },
    {
      name: 'sorted by key across both forms',
      selector: { matchLabels: { z: '1', b: '2' }, matchExpressions: [{ key: 'm', operator: 'Exists' }] },
      labels: { z: '1', b: '2', m: 'x' },
      matches: true,
      text: 'b=2,m,z=1',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange: the case
      // act
      const matches = selectorMatches(c.selector, c.labels);
      const text = selectorString(c.selector);
      // assert
      assert.equal(matches, c.matches);
      assert.equal(text, c.text);
    });
  }

  const invalid: { name: string; selector: LabelSelector; field: string }[] = [
    { name: 'unknown operator', selector: { matchExpressions: [{ key: 'a', operator: 'Near' }] }, field: 'spec.selector.matchExpressions[0].operator' },
    { name: 'In without values', selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, field: 'spec.selector.matchExpressions[0].values' },
    { name: 'Exists with values', selector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, field: 'spec.selector.matchExpressions[0].values' },
    { name: 'empty key', selector: { matchExpressions: [{ key: '', operator: 'Exists' }] }, field: 'spec.selector.matchExpressions[0].key' },
  ];
  for (const c of invalid) {
    test(`invalid: ${c.name}`, () => {
      // arrange: the case
      // act
      const act = () => validateSelector(c.selector, 'spec.selector');
      // assert
      assert.throws(act, (e: unknown) => e instanceof InvalidInputError && e.field === c.field);
    });
  }
});

describe('owner references', () => {
  test('controller ref, controlled-by and the adopt / release patches', () => {
    // arrange
    const owner = { metadata: { name: 'rs', uid: 'u-rs' } };
    const ref = controllerRef('kubevirt.io/v1', 'VirtualMachineInstanceReplicaSet', owner);
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'x' };
    const obj = { metadata: { uid: 'u-obj', ownerReferences: [other, ref] } };
    const orphan = { metadata: { uid: 'u-obj', ownerReferences: [other] } };
    // act
    const adopt = adoptPatch(orphan, ref);
    const release = releasePatch(obj, 'u-rs');
    // assert
    assert.deepEqual(ref, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'rs', uid: 'u-rs', controller: true, blockOwnerDeletion: true });
    assert.equal(controllerOf(obj)?.uid, 'u-rs');
    assert.equal(isControlledByUid(obj, 'u-rs'), true);
    assert.equal(isControlledByUid(obj, 'x'), false, 'a non-controller reference does not control');
    assert.equal(isControlledByUid(obj, undefined), false);
    assert.deepEqual(adopt, { type: 'merge', body: { metadata: { ownerReferences: [other, ref], uid: 'u-obj' } } }, 'other owners are kept');
    assert.deepEqual(release, { type: 'merge', body: { metadata: { ownerReferences: [other], uid: 'u-obj' } } }, 'only our reference goes');
  });
});

describe('VMI predicates', () => {
  const vmi = (phase: string | undefined, ready?: { status: string; reason?: string }, deleting = false): VirtualMachineInstance => ({
    metadata: { name: 'v', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { domain: { devices: {} } },
    status: { ...(phase ? { phase } : {}), ...(ready ? { conditions: [{ type: 'Ready', ...ready }] } : {}) },
  });
  const cases: { name: string; vmi: VirtualMachineInstance; final: boolean; deleting: boolean; ready: boolean; unknown: boolean }[] = [
    { name: 'running and ready', vmi: vmi('Running', { status: 'True' }), final: false, deleting: false, ready: true, unknown: false },
    { name: 'pending, no conditions', vmi: vmi('Pending'), final: false, deleting: false, ready: false, unknown: false },
    { name: 'succeeded', vmi: vmi('Succeeded'), final: true, deleting: false, ready: false, unknown: false },
    { name: 'failed', vmi: vmi('Failed'), final: true, deleting: false, ready: false, unknown: false },
    { name: 'pod terminating', vmi: vmi('Running', { status: 'False', reason: 'PodTerminating' }), final: false, deleting: false, ready: false, unknown: true },
    { name: 'pod terminating but deleting', vmi: vmi('Running', { status: 'False', reason: 'PodTerminating' }, true), final: false, deleting: true, ready: false, unknown: false },
    { name: 'not ready for another reason', vmi: vmi('Running', { status: 'False', reason: 'GuestNotRunning' }), final: false, deleting: false, ready: false, unknown: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange: the case
      // act
      const got = { final: isVmiFinal(c.vmi), deleting: isVmiDeleting(c.vmi), ready: isVmiReady(c.vmi), unknown: isVmiUnknown(c.vmi) };
      // assert
      assert.deepEqual(got, { final: c.final, deleting: c.deleting, ready: c.ready, unknown: c.unknown });
    });
  }
});
