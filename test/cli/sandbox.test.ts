import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import { projectRoot } from '../support/reference.ts';

test('sandbox runs standalone: prints its kubeconfig, serves nodes, provisions claims (the storage side runs), stops on SIGTERM with exit 0', async () => {
  // arrange
  const child = spawn(process.execPath, ['bin/virt-reconciler.js', 'sandbox', '--nodes', '2', '--speed', '10'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.resume();
  try {
    // act: wait for the kubeconfig line
    const path = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = /^kubeconfig: (.+)$/m.exec(out);
        if (m) resolve(m[1]!.trim());
      };
      child.stdout.on('data', check);
      child.once('exit', (code) => reject(new Error(`sandbox exited early (${code}): ${out}`)));
    });
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    const core = kc.makeApiClient(CoreV1Api);
    const nodes = await core.listNode();
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { metadata: { name: 'cli-claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } } });
    let phase: string | undefined;
    for (let i = 0; i < 200 && phase !== 'Bound'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      phase = (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'cli-claim' })).status?.phase;
    }
    // assert
    assert.deepEqual(nodes.items.map((n) => n.metadata?.name).sort(), ['node01', 'node02']);
    assert.equal(phase, 'Bound', 'the simulated provisioner binds a claim of the sandbox storage class');
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, `clean exit on SIGTERM; output:\n${out}`);
});

test('sandbox with a wrong flag is a one-line error and exit 2', () => {
  const cases = [['--nodes', 'zero'], ['--speed=-1'], ['--speed', '0'], ['--bogus']];
  for (const args of cases) {
    const r = spawnSync(process.execPath, ['bin/virt-reconciler.js', 'sandbox', ...args], { cwd: projectRoot, encoding: 'utf8' });
    assert.equal(r.status, 2, `${args.join(' ')} exits 2`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: one line, got ${r.stderr}`);
  }
});
