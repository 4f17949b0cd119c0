/**
 * The commands a KubeVirt user types, through the real kubectl binary against the sandbox
 * cluster (`startSandbox()`): apply with kubectl's default validation, a second apply, get with
 * the CRDs' and the built-ins' printer columns (and `-o wide`), explain, patch, label, wait,
 * describe, logs, delete and `get -w`. Node maintenance (cordon, drain with a PDB) and scale are
 * in maintenance.test.ts. Assertions are on what kubectl prints.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { headerOf, rowOf, SKIP_WITHOUT_KUBECTL, useKubectlCluster } from './support.ts';
import { REAL } from '../support/lanes.ts';
import { KUBEVIRT_HANDLER_USER } from '../../sandbox/sandbox.ts';

const VMI = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: testvmi
  labels:
    app: demo
spec:
  domain:
    devices: {}
    resources:
      requests:
        memory: 64Mi
`;

const TYPO_VMI = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: typo
spec:
  domain:
    devices: {}
    resources:
      request:
        memory: 64Mi
`;

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`;

describe('kubectl against the sandbox', { skip: SKIP_WITHOUT_KUBECTL }, () => {
  const cluster = useKubectlCluster();

  test('apply with default validation creates the VMI; a second apply says unchanged', async () => {
    // arrange
    const file = await cluster().manifest('vmi.yaml', VMI);
    // act
    const first = await cluster().kubectl(['apply', '-f', file]);
    const second = await cluster().kubectl(['apply', '-f', file]);
    // assert
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout.trim(), 'virtualmachineinstance.kubevirt.io/testvmi created');
    assert.equal(second.stdout.trim(), 'virtualmachineinstance.kubevirt.io/testvmi unchanged', second.stderr);
  });

  test('apply with default validation refuses a misspelt field, naming it as the server does; --validate=warn prunes it and warns', async () => {
    // arrange: "request" for "requests"
    const file = await cluster().manifest('typo.yaml', TYPO_VMI);
    // act
    const strict = await cluster().kubectl(['apply', '-f', file]);
    const warn = await cluster().kubectl(['apply', '--validate=warn', '-f', file]);
    const stored = await cluster().kubectl(['get', 'vmi', 'typo', '-o', 'jsonpath={.spec.domain.resources}']);
    // assert
    assert.notEqual(strict.code, 0);
    assert.equal(strict.stderr.trim(), `Error from server (BadRequest): error when creating "${file}": VirtualMachineInstance in version "v1" cannot be handled as a VirtualMachineInstance: strict decoding error: unknown field "spec.domain.resources.request"`);
    assert.equal(warn.code, 0, warn.stderr);
    assert.equal(warn.stderr.trim(), 'Warning: unknown field "spec.domain.resources.request"');
    assert.equal(warn.stdout.trim(), 'virtualmachineinstance.kubevirt.io/typo created');
    assert.equal(stored.stdout, '{}', 'the unknown field was pruned');
    // Clean-up only: virt-api's finalizer keeps it until a VMI controller (none here) releases it.
    await cluster().kubectl(['delete', 'vmi', 'typo', '--wait=false']);
  });

  test('get vmi prints the CRD printer columns, -o wide adds the priority-1 ones', async () => {
    // arrange: status as virt-handler would report it (a VMI has no /status, a main-resource patch
    // sets it), as virt-handler: virt-api puts back a VMI status anyone but KubeVirt's accounts writes
    const status = { phase: 'Running', nodeName: 'node02', interfaces: [{ ipAddress: '10.244.2.7' }], conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'False' }] };
    const patched = await cluster().kubectl(['patch', 'vmi', 'testvmi', '--type=merge', '-p', JSON.stringify({ status }), `--as=${KUBEVIRT_HANDLER_USER}`]);
    assert.equal(patched.code, 0, patched.stderr);
    // act
    const narrow = await cluster().kubectl(['get', 'vmi']);
    const wide = await cluster().kubectl(['get', 'vmi', '-o', 'wide']);
    // assert
    assert.deepEqual(headerOf(narrow.stdout), ['NAME', 'AGE', 'PHASE', 'IP', 'NODENAME', 'READY']);
    const row = rowOf(narrow.stdout, 'testvmi')!;
    assert.deepEqual(row.slice(2), ['Running', '10.244.2.7', 'node02', 'True']);
    assert.match(row[1]!, /^\d+s$/, 'AGE is a duration');
    assert.deepEqual(headerOf(wide.stdout), ['NAME', 'AGE', 'PHASE', 'IP', 'NODENAME', 'READY', 'LIVE-MIGRATABLE', 'PAUSED']);
    assert.deepEqual(rowOf(wide.stdout, 'testvmi')!.slice(2), ['Running', '10.244.2.7', 'node02', 'True', 'False']);
  });

  test('get nodes prints STATUS, ROLES, AGE, VERSION; -o wide the addresses and node info', async () => {
    // act
    const narrow = await cluster().kubectl(['get', 'nodes']);
    const wide = await cluster().kubectl(['get', 'nodes', '-o', 'wide']);
    // assert
    assert.deepEqual(headerOf(narrow.stdout), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    const row = rowOf(narrow.stdout, 'node01')!;
    assert.equal(row[1], 'Ready');
    assert.equal(row[2], '<none>');
    assert.match(row[4]!, /^v1\.\d+/);
    assert.deepEqual(headerOf(wide.stdout), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
  });

  test('explain vmi.spec describes the field from the CRD schema', async () => {
    // act
    const r = await cluster().kubectl(['explain', 'vmi.spec']);
    const nested = await cluster().kubectl(['explain', 'vmi.spec.domain.resources']);
    const builtin = await cluster().kubectl(['explain', 'pod.spec.containers.name']);
    // assert
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /KIND:\s+VirtualMachineInstance/);
    assert.match(r.stdout, /FIELD: spec <Object>/);
    assert.match(r.stdout, /^\s+domain\t<Object> -required-/m);
    assert.match(nested.stdout, /FIELD: resources <Object>/);
    assert.match(builtin.stdout, /FIELD: name <string>/);
  });

  test('label and patch print what they did; get -L shows the label', async () => {
    // act
    const label = await cluster().kubectl(['label', 'vmi', 'testvmi', 'tier=gold']);
    const patch = await cluster().kubectl(['patch', 'vmi', 'testvmi', '--type=json', '-p', '[{"op":"add","path":"/metadata/annotations","value":{"note":"x"}}]']);
    const noop = await cluster().kubectl(['patch', 'vmi', 'testvmi', '--type=merge', '-p', '{"metadata":{"annotations":{"note":"x"}}}']);
    const shown = await cluster().kubectl(['get', 'vmi', 'testvmi', '-L', 'tier']);
    // assert
    assert.equal(label.stdout.trim(), 'virtualmachineinstance.kubevirt.io/testvmi labeled', label.stderr);
    assert.equal(patch.stdout.trim(), 'virtualmachineinstance.kubevirt.io/testvmi patched', patch.stderr);
    assert.equal(noop.stdout.trim(), 'virtualmachineinstance.kubevirt.io/testvmi patched (no change)', noop.stderr);
    assert.equal(headerOf(shown.stdout).at(-1), 'TIER');
    assert.equal(rowOf(shown.stdout, 'testvmi')!.at(-1), 'gold');
  });

  test('a pod: wait for Ready, get with pod columns, describe with events, logs answer at once', async () => {
    // arrange
    const file = await cluster().manifest('pod.yaml', POD);
    assert.equal((await cluster().kubectl(['apply', '-f', file])).code, 0);
    // act
    const wait = await cluster().kubectl(['wait', '--for=condition=Ready', 'pod/web', '--timeout=60s']);
    const get = await cluster().kubectl(['get', 'pods', '-o', 'wide']);
    const describe = await cluster().kubectl(['describe', 'pod', 'web']);
    const logs = await cluster().kubectl(['logs', 'web']);
    // assert
    assert.equal(wait.stdout.trim(), 'pod/web condition met', wait.stderr);
    assert.deepEqual(headerOf(get.stdout), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    const row = rowOf(get.stdout, 'web')!;
    assert.deepEqual(row.slice(1, 4), ['1/1', 'Running', '0']);
    assert.match(row[6]!, /^node0\d$/);
    assert.match(describe.stdout, /^Name:\s+web$/m);
    assert.match(describe.stdout, /^Status:\s+Running$/m);
    assert.match(describe.stdout, /^Events:/m);
    assert.notEqual(logs.code, 0);
    // The real API server tries the simulated node's kubelet (there is none) and says so; the
    // emulator names the reason.
    if (REAL) assert.match(logs.stderr, /^Error from server/m);
    else assert.match(logs.stderr, /Error from server \(BadRequest\): pod "web" runs on simulated node "node0\d": the sandbox cluster runs no containers/);
  });

  test('get -w prints the table, then a row per change', async () => {
    // arrange
    const watch = cluster().spawnKubectl(['get', 'vmi', '-w']);
    let out = '';
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => re.test(out) && resolve();
        watch.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          check();
        });
        watch.once('exit', () => reject(new Error(`kubectl get -w exited; it printed:\n${out}`)));
        check();
      });
    try {
      await seen(/^testvmi\s+/m);
      // act
      await cluster().kubectl(['patch', 'vmi', 'testvmi', '--type=merge', '-p', '{"status":{"phase":"Succeeded"}}', `--as=${KUBEVIRT_HANDLER_USER}`]);
      // assert
      await seen(/^testvmi\s+\S+\s+Succeeded/m);
      assert.deepEqual(headerOf(out), ['NAME', 'AGE', 'PHASE', 'IP', 'NODENAME', 'READY']);
    } finally {
      watch.kill();
    }
  });

  test('delete prints what it deleted; get then says NotFound', async () => {
    // arrange: virt-api's create mutator gave the VMI its foregroundDeleteVirtualMachine finalizer,
    // which KubeVirt's VMI controller releases once the VMI is final; no controller runs here.
    const released = await cluster().kubectl(['patch', 'vmi', 'testvmi', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    assert.equal(released.code, 0, released.stderr);
    // act
    const del = await cluster().kubectl(['delete', 'vmi', 'testvmi']);
    const get = await cluster().kubectl(['get', 'vmi', 'testvmi']);
    // assert
    assert.equal(del.stdout.trim(), 'virtualmachineinstance.kubevirt.io "testvmi" deleted', del.stderr);
    assert.equal(get.stderr.trim(), 'Error from server (NotFound): virtualmachineinstances.kubevirt.io "testvmi" not found');
  });
});
