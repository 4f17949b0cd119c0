/**
 * `virt-reconciler trace` end to end: the sandbox and the local runtime (relay → SQLite queue →
 * vm/vmi/migration workers → SQLite table, on a file), a VM started by the test, then the real
 * CLI in a child process reading that file: the VM → VMI → launcher pod chain with every write
 * in the order it was made.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ObjectTrace } from '../../ops/trace/collect.ts';
import { VMIS, VMS } from '../../shared/api/resources.ts';
import { runCli } from '../support/cli.ts';
import { NS, queueIdle, startSlice, until, vmManifest, type Slice } from './support.ts';

/** The CLI with no $KUBECONFIG of the machine's: the cluster is the sandbox's, passed by flag. */
const cli = (args: readonly string[]) => runCli(args, { KUBECONFIG: '' });

describe('virt-reconciler trace on the sandbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-e2e-'));
  const db = join(dir, 'virt-reconciler.db');
  let s: Slice;
  before(async () => {
    s = await startSlice({ runtime: { dbPath: db } });
    await s.kube.create(VMS, vmManifest('tvm', { runStrategy: 'Always' }));
    await until('VMI tvm Running', async () => (await s.kube.get(VMIS, NS, 'tvm'))?.status?.phase === 'Running', { problems: s.problems });
    await until('queues idle', () => queueIdle(s, ['vm', 'vmi']));
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a VM: its reconciles, its VMI’s, the launcher pod; the VMI created before the pod, both 201', async () => {
    // arrange
    const args = ['trace', 'vm/default/tvm', '--db', db, '--kubeconfig', s.sandbox.kubeconfigPath];
    // act
    const [json, text] = await Promise.all([cli([...args, '--json']), cli(args)]);
    // assert
    assert.equal(json.code, 0, json.stderr);
    const trace = JSON.parse(json.stdout) as ObjectTrace;
    assert.deepEqual(trace.links.map((l) => `${l.controller} ${l.key}`), ['vm default/tvm', 'vmi default/tvm']);
    assert.ok(trace.links.every((l) => l.reconciles > 0), JSON.stringify(trace.links));
    assert.equal(trace.pods.length, 1, `one launcher pod written: ${trace.pods.join(', ')}`);
    assert.match(trace.pods[0]!, /^default\/virt-launcher-tvm-\w{5}$/);
    const writes = trace.timeline.filter((r) => r.step === 'write').map((r) => `${r.controller} ${r.text}`);
    const vmiCreate = writes.indexOf('vm create virtualmachineinstances default/tvm → 201');
    const podCreate = writes.indexOf(`vmi create pods ${trace.pods[0]} → 201`);
    assert.ok(vmiCreate >= 0 && podCreate > vmiCreate, `VMI created, then its pod:\n${writes.join('\n')}`);
    // Every write of every entry is on the timeline, in the entries' order.
    assert.deepEqual(writes, trace.entries.flatMap((e) => e.writes.map((w) => `${e.controller} ${w.verb} ${w.resource} ${w.namespace}/${w.name} → ${w.code}`)));
    // The timeline is time-ordered per reconcile, and each reconcile has its event and message first.
    const reconciles = trace.timeline.filter((r) => r.step === 'reconcile').map((r) => r.at);
    assert.deepEqual(reconciles, [...reconciles].sort((a, b) => a - b));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout.split('\n')[0]!, /^trace vm\/default\/tvm: \d+ reconciles, \d+ writes \(SQLite /);
    const vmiLine = text.stdout.indexOf('create virtualmachineinstances default/tvm → 201');
    const podLine = text.stdout.indexOf(`create pods ${trace.pods[0]} → 201`);
    assert.ok(vmiLine > 0 && podLine > vmiLine, text.stdout);
  });

  test('bad input: one line, exit 2', async () => {
    // arrange
    const cases = [['trace'], ['trace', 'pod/default/x'], ['trace', 'vm/default'], ['trace', 'vm/Default/x']];
    // act
    const runs = await Promise.all(cases.map((c) => cli([...c, '--db', db])));
    // assert
    for (const [i, r] of runs.entries()) {
      assert.equal(r.code, 2, `${cases[i]!.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^virt-reconciler trace: /);
    }
  });
});
