/**
 * Server-side apply as a KubeVirt user meets it, through the real kubectl: `apply --server-side`
 * creates and updates, two field managers that disagree get the 409 with the conflicting field
 * and its manager, `--force-conflicts` takes the field over, a field a manager stops applying is
 * removed, and kubectl's upgrade from client-side apply goes through without a conflict.
 * Assertions are on what kubectl prints.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SKIP_WITHOUT_KUBECTL, useKubectlCluster } from './support.ts';

function vm(name: string, runStrategy: string, labels: Record<string, string> = {}): string {
  return `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: ${name}
  labels: ${JSON.stringify(labels)}
spec:
  runStrategy: ${runStrategy}
  template:
    spec:
      domain: {devices: {}, memory: {guest: 64Mi}}
`;
}

describe('kubectl apply --server-side against the sandbox', { skip: SKIP_WITHOUT_KUBECTL }, () => {
  const cluster = useKubectlCluster();
  const jsonpath = async (name: string, path: string) => (await cluster().kubectl(['get', 'vm', name, '--show-managed-fields', '-o', `jsonpath=${path}`])).stdout;

  test('apply --server-side creates, then updates; managedFields name the applier', async () => {
    // arrange
    const first = await cluster().manifest('vm-ssa.yaml', vm('ssa', 'Halted', { tier: 'gold' }));
    const second = await cluster().manifest('vm-ssa-2.yaml', vm('ssa', 'Manual', { tier: 'gold' }));
    // act
    const created = await cluster().kubectl(['apply', '--server-side', '-f', first]);
    const updated = await cluster().kubectl(['apply', '--server-side', '-f', second]);
    // assert
    assert.equal(created.stdout.trim(), 'virtualmachine.kubevirt.io/ssa serverside-applied', created.stderr);
    assert.equal(updated.stdout.trim(), 'virtualmachine.kubevirt.io/ssa serverside-applied', updated.stderr);
    assert.equal(await jsonpath('ssa', '{.spec.runStrategy}'), 'Manual');
    assert.equal(await jsonpath('ssa', '{range .metadata.managedFields[*]}{.manager}/{.operation} {end}'), 'kubectl/Apply ');
  });

  test('a second field manager that changes a field is refused with the conflict; --force-conflicts takes it over', async () => {
    // arrange
    const theirs = await cluster().manifest('vm-ssa-ops.yaml', vm('ssa', 'Always', { tier: 'gold' }));
    // act
    const refused = await cluster().kubectl(['apply', '--server-side', '--field-manager=ops', '-f', theirs]);
    const forced = await cluster().kubectl(['apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', theirs]);
    // assert
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /^error: Apply failed with 1 conflict: conflict with "kubectl": \.spec\.runStrategy$/m);
    assert.match(refused.stderr, /--force-conflicts/, 'kubectl explains how to resolve it');
    assert.equal(forced.stdout.trim(), 'virtualmachine.kubevirt.io/ssa serverside-applied', forced.stderr);
    assert.equal(await jsonpath('ssa', '{.spec.runStrategy}'), 'Always');
    // the shared fields (same values) stay co-owned; runStrategy moved to ops
    assert.equal(await jsonpath('ssa', '{range .metadata.managedFields[*]}{.manager}:{.fieldsV1.f:spec.f:runStrategy}; {end}'), 'kubectl:; ops:{}; ');
  });

  test('a field the manager stops applying is removed when nobody else owns it', async () => {
    // arrange: ops drops the label it co-owned, kubectl drops it too
    const opsWithout = await cluster().manifest('vm-ssa-ops-2.yaml', vm('ssa', 'Always'));
    const kubectlWithout = await cluster().manifest('vm-ssa-3.yaml', vm('ssa', 'Always'));
    // act
    const one = await cluster().kubectl(['apply', '--server-side', '--field-manager=ops', '-f', opsWithout]);
    const kept = await jsonpath('ssa', '{.metadata.labels.tier}');
    const two = await cluster().kubectl(['apply', '--server-side', '--force-conflicts', '-f', kubectlWithout]);
    const gone = await jsonpath('ssa', '{.metadata.labels}');
    // assert
    assert.equal(one.code, 0, one.stderr);
    assert.equal(two.code, 0, two.stderr);
    assert.equal(kept, 'gold', 'still applied by kubectl');
    assert.equal(gone, '', 'applied by nobody: removed');
  });

  test('client-side apply, then apply --server-side of a change: kubectl upgrades without a conflict', async () => {
    // arrange
    const csa = await cluster().manifest('vm-csa.yaml', vm('csa', 'Halted'));
    const ssa = await cluster().manifest('vm-csa-2.yaml', vm('csa', 'Manual'));
    assert.equal((await cluster().kubectl(['apply', '-f', csa])).code, 0);
    // act
    const upgraded = await cluster().kubectl(['apply', '--server-side', '-f', ssa]);
    // assert
    assert.equal(upgraded.stdout.trim(), 'virtualmachine.kubevirt.io/csa serverside-applied', upgraded.stderr);
    assert.equal(await jsonpath('csa', '{.spec.runStrategy}'), 'Manual');
  });

  test('an unknown field in a server-side apply is refused: the typed object cannot be built', async () => {
    // arrange
    const file = await cluster().manifest('vm-typo.yaml', vm('typo', 'Halted').replace('runStrategy:', 'runStrategyy:'));
    // act
    const r = await cluster().kubectl(['apply', '--server-side', '-f', file]);
    // assert
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /failed to create typed patch object \(default\/typo; kubevirt\.io\/v1, Kind=VirtualMachine\): \.spec\.runStrategyy: field not declared in schema/);
  });
});
