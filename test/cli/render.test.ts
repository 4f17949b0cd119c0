import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { projectRoot } from '../support/reference.ts';

function cli(...args: string[]) {
  return spawnSync(process.execPath, ['bin/virt-reconciler.js', 'render', ...args], { cwd: projectRoot, encoding: 'utf8' });
}

const dir = mkdtempSync(join(tmpdir(), 'render-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
const fixture = 'test/fixtures/vmis/containerdisk-cloudinit.yaml';

function assertOneLineError(r: ReturnType<typeof cli>, ...patterns: RegExp[]) {
  assert.equal(r.status, 2, `exit 2, stderr: ${r.stderr}`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
  for (const p of patterns) assert.match(r.stderr, p);
}

describe('virt-reconciler render', () => {
  test('renders a fixture launcher pod as YAML', () => {
    const r = cli('launcher-pod', '-f', fixture);
    assert.equal(r.status, 0, r.stderr);
    const pod = parse(r.stdout);
    assert.equal(pod.metadata.generateName, 'virt-launcher-cd-cloudinit-');
    assert.equal(pod.spec.containers[0].resources.requests.memory, '1303943013');
  });

  test('renders JSON with -o json', () => {
    const r = cli('launcher-pod', '-f', fixture, '-o', 'json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).kind, 'Pod');
  });

  test('renders a target pod and an attachment pod', () => {
    const target = parse(cli('target-pod', '-f', fixture).stdout);
    assert.equal(target.metadata.labels['kubevirt.io/migrationJobUID'], '00000000-0000-4000-8000-000000000001');
    const vm = 'test/fixtures/vmis/pvc-datavolume.yaml';
    const hp = parse(cli('attachment-pod', '-f', vm).stdout);
    assert.equal(hp.metadata.generateName, 'hp-volume-');
    assert.deepEqual(hp.spec.volumes.map((v: { name: string }) => v.name), ['hotplug-disks', 'hot']);
  });

  test('picks the VMI out of a multi-document file and reads a KubeVirt CR', () => {
    const p = file('multi.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n${readFixture()}`);
    const kv = file('kv.yaml', 'apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt}\nspec:\n  imageTag: v9.9.9\n  configuration:\n    developerConfiguration: {cpuAllocationRatio: 2}\n');
    const r = cli('launcher-pod', '-f', p, '--kubevirt', kv);
    assert.equal(r.status, 0, r.stderr);
    const pod = parse(r.stdout);
    assert.equal(pod.spec.containers[0].image, 'quay.io/kubevirt/virt-launcher:v9.9.9');
    assert.equal(pod.spec.containers[0].resources.requests.cpu, '500m');
  });

  test('--objects: a Block claim becomes a device, a quota limiting memory an automatic limit, the CR in the stream configures', () => {
    // arrange: the claim's VMI as written (docs/fidelity.md: without objects every claim is Filesystem RWO)
    const vmi = file('objects-vmi.yaml', [
      'apiVersion: kubevirt.io/v1', 'kind: VirtualMachineInstance', 'metadata: {name: blk, namespace: team}',
      'spec:', '  domain:', '    resources: {requests: {memory: 128Mi}}', '    devices: {disks: [{name: root, disk: {bus: virtio}}]}',
      '  volumes: [{name: root, persistentVolumeClaim: {claimName: root-claim}}]', '',
    ].join('\n'));
    const objects = file('objects.yaml', [
      'apiVersion: v1', 'kind: PersistentVolumeClaim', 'metadata: {name: root-claim, namespace: team}', 'spec: {volumeMode: Block, accessModes: [ReadWriteMany]}',
      '---', 'apiVersion: v1', 'kind: ResourceQuota', 'metadata: {name: q, namespace: team}', 'spec: {hard: {limits.memory: 10Gi}}',
      '---', 'apiVersion: kubevirt.io/v1', 'kind: KubeVirt', 'metadata: {name: kubevirt}', 'spec: {imageTag: v7.7.7}', '',
    ].join('\n'));
    // act
    const withObjects = cli('launcher-pod', '-f', vmi, '--objects', objects);
    const without = cli('launcher-pod', '-f', vmi);
    // assert
    assert.equal(withObjects.status, 0, withObjects.stderr);
    const c = parse(withObjects.stdout).spec.containers[0];
    assert.deepEqual(c.volumeDevices, [{ name: 'root', devicePath: '/dev/root' }]);
    assert.ok(c.resources.limits.memory, 'an automatic memory limit');
    assert.equal(c.image, 'quay.io/kubevirt/virt-launcher:v7.7.7');
    const plain = parse(without.stdout).spec.containers[0];
    assert.equal(plain.volumeDevices, undefined);
    assert.equal(plain.resources.limits.memory, undefined);
  });

  test('--objects without a claim the VMI uses: one line naming the objects file and the claim', () => {
    // arrange
    const vmi = file('objects-vmi2.yaml', 'apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: v}\nspec:\n  domain: {devices: {disks: [{name: d, disk: {}}]}, resources: {requests: {memory: 64Mi}}}\n  volumes: [{name: d, persistentVolumeClaim: {claimName: nope}}]\n');
    const objects = file('objects-empty.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n');
    // act / assert
    assertOneLineError(cli('launcher-pod', '-f', vmi, '--objects', objects), /objects-empty\.yaml/, /didn't find PVC nope/);
  });

  test('a missing file is a one-line error naming it, exit 2', () => {
    assertOneLineError(cli('launcher-pod', '-f', join(dir, 'nope.yaml')), /nope\.yaml/, /cannot read/);
  });

  test('bad YAML is a one-line error naming the file', () => {
    assertOneLineError(cli('launcher-pod', '-f', file('bad.yaml', 'kind: [unclosed\n')), /bad\.yaml: invalid YAML/);
  });

  test('a file without a VMI or VM says so', () => {
    assertOneLineError(cli('launcher-pod', '-f', file('cm.yaml', 'kind: ConfigMap\nmetadata: {name: x}\n')), /cm\.yaml: no VirtualMachineInstance or VirtualMachine/);
  });

  test('an invalid field is a one-line error naming file and field', () => {
    const p = file('badmem.yaml', 'apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: v}\nspec:\n  domain:\n    devices: {}\n    resources: {requests: {memory: lots}}\n');
    assertOneLineError(cli('launcher-pod', '-f', p), /badmem\.yaml/, /spec\.domain\.resources\.requests\.memory/);
  });

  test('an invalid KubeVirt CR field names the CR file', () => {
    const kv = file('badkv.yaml', 'kind: KubeVirt\nspec: {configuration: {developerConfiguration: {cpuAllocationRatio: 0}}}\n');
    assertOneLineError(cli('launcher-pod', '-f', fixture, '--kubevirt', kv), /badkv\.yaml/, /cpuAllocationRatio/);
  });

  test('an unknown pod kind is an error', () => {
    assertOneLineError(cli('frob-pod', '-f', fixture), /launcher-pod/);
  });
});

function readFixture(): string {
  return readFileSync(join(projectRoot, fixture), 'utf8');
}
