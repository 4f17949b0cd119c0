import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { projectRoot } from '../support/reference.ts';

test('sandbox runs standalone: prints its kubeconfig, serves nodes, stops on SIGTERM with exit 0', async () => {
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
    const nodes = await kc.makeApiClient(CoreV1Api).listNode();
    // assert
    assert.deepEqual(nodes.items.map((n) => n.metadata?.name).sort(), ['node01', 'node02']);
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
