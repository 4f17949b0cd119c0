/** Which VMI a pod belongs to, as the relay's mappers follow it (shared/relay/pod-owners.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OWNER_VMI_NAME_ANNOTATION } from '../../../shared/api/well-known.ts';
import { PodOwners } from '../../../shared/relay/pod-owners.ts';

const launcher = { metadata: { name: 'launcher', namespace: 'ns', uid: 'l-uid', ownerReferences: [{ kind: 'VirtualMachineInstance', name: 'a', uid: 'a-uid', controller: true }] } };
const attachment = { metadata: { name: 'hp', namespace: 'ns', uid: 'hp-uid', ownerReferences: [{ kind: 'Pod', name: 'launcher', uid: 'l-uid', controller: true }] } };

test('an attachment pod maps through its launcher pod to the VMI, until the launcher is deleted', () => {
  // arrange
  const owners = new PodOwners();
  // act
  const viaLauncher = (owners.observe(launcher, false), owners.observe(attachment, false));
  owners.observe(attachment, true);
  owners.observe(launcher, true);
  const afterDelete = owners.observe(attachment, false);
  // assert
  assert.equal(viaLauncher, 'ns/a');
  assert.equal(afterDelete, undefined, 'a deleted launcher pod is still remembered');
  owners.observe(attachment, true);
  assert.equal(owners.size, 0, 'deleted pods are forgotten');
});

test('an orphan (its owner reference removed) names its VMI by the owner annotation', () => {
  // arrange
  const owners = new PodOwners();
  // act
  const got = owners.observe({ metadata: { name: 'p', namespace: 'ns', uid: 'p-uid', annotations: { [OWNER_VMI_NAME_ANNOTATION]: 'x' } } }, false);
  // assert
  assert.equal(got, 'ns/x');
});
