/**
 * The cutover's commands through the real CLI (docs/cutover.md): `status`, `takeover`, `handback`
 * against a sandbox whose Lease a "live controller" (a Lease written as client-go writes it) holds,
 * `divergences` on a database, and `up` refusing to write beside a live holder.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { LEASES } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { LeaseClient } from '../../shared/cutover/lease.ts';
import { SqliteDivergences } from '../../shared/cutover/divergence-store.ts';
import { runCli } from '../support/cli.ts';

let sandbox: Sandbox;
let dir: string;
let live: LeaseClient;
let renewer: NodeJS.Timeout;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vr-cutover-cli-'));
  sandbox = await startSandbox({ nodes: 1, kubeconfigOut: join(dir, 'kubeconfig') });
  // The live virt-controller: holds the Lease and renews it every 2 s, as client-go's elector does.
  live = new LeaseClient(createKubeClient(sandbox.apiServer.kubeConfig('test')), { identity: 'virt-controller-abc12' });
  assert.ok((await live.acquire()).acquired);
  renewer = setInterval(() => void live.renew().catch(() => undefined), 2000);
});
after(async () => {
  clearInterval(renewer);
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli([...args], { KUBECONFIG: join(dir, 'kubeconfig'), VR_LEASE_IDENTITY: '' });

describe('cutover commands', () => {
  test('status names the live holder; up refuses to write beside it, in one line pointing to --shadow and takeover', async () => {
    // act
    const status = await cli(['status']);
    const up = await cli(['up', '--no-dashboard', '--no-examples', '--data-dir', join(dir, 'up')]);
    // assert
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /held by virt-controller-abc12, live, since .* renewed \d+ s ago, lease 15 s/);
    assert.equal(up.code, 1, up.stdout);
    const line = up.stderr.trim().split('\n').filter((l) => l.startsWith('virt-reconciler up:'));
    assert.equal(line.length, 1, up.stderr);
    assert.match(line[0]!, /held by virt-controller-abc12.*--shadow.*takeover/);
  });

  test('takeover writes our identity and the instant we may write (the old holder\'s 15 s + 2 s); handback without an embedded queue releases at once', async () => {
    // act
    const taken = await cli(['takeover', '--no-wait']);
    const status = await cli(['status', '--json']);
    const back = await cli(['handback', '--db', join(dir, 'none.db'), '--settle-timeout', '0']);
    const released = await createKubeClient(sandbox.apiServer.kubeConfig('test')).get(LEASES, 'kubevirt', 'virt-controller');
    // assert
    assert.equal(taken.code, 0, taken.stderr);
    assert.match(taken.stdout, /took virt-controller's Lease \(kubevirt\) from virt-controller-abc12 as virt-reconciler; we write from .* \(in 1[67] s\)/);
    const view = JSON.parse(status.stdout) as { holder: string; ours: boolean; weWrite: boolean; writableAfter: number };
    assert.deepEqual([view.holder, view.ours, view.weWrite], ['virt-reconciler', true, false], 'ours, but not writable before the old leader stopped');
    assert.equal(back.code, 0, back.stderr);
    assert.equal(released?.spec?.holderIdentity, '', 'released: no holder');
    assert.equal(released?.spec?.leaseDurationSeconds, 1);
  });

  test('divergences: none is exit 0, some is exit 1 with the fields by key; --json; a bad controller is exit 2', async () => {
    // arrange
    const file = join(dir, 'div.db');
    const db = new DatabaseSync(file);
    const store = new SqliteDivergences(db);
    const emptyRun = await cli(['divergences', '--db', file]);
    store.add({ at: Date.parse('2026-12-06T09:00:00Z'), controller: 'vmi', key: 'default/a', write: 'create pods', object: 'Pod default/virt-launcher-a-*', fields: [{ path: 'spec.containers.0.image', ours: 'x', live: 'y' }] });
    db.close();
    // act
    const text = await cli(['divergences', '--db', file]);
    const json = await cli(['divergences', '--db', file, '--json']);
    const bad = await cli(['divergences', '--db', file, '--controller', 'nope']);
    // assert
    assert.deepEqual([emptyRun.code, emptyRun.stdout], [0, 'no divergences\n']);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /^vmi default\/a\n {2}create pods Pod default\/virt-launcher-a-\* \(×1, first 2026-12-06T09:00:00.000Z\)\n {4}spec.containers.0.image: ours "x", live "y"\n1 divergences\n$/);
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, 1);
    assert.equal(bad.code, 2, bad.stderr);
  });
});
