import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { KubeConfigError, loadKubeConfig } from '../../shared/kube/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(file: string, server: string, context = 'ctx'): string {
  const path = join(dir, file);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `current-context: ${context}`,
      'clusters:',
      `- name: c-${context}`,
      '  cluster:',
      `    server: ${server}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      `- name: u-${context}`,
      '  user:',
      '    token: t',
      'contexts:',
      `- name: ${context}`,
      '  context:',
      `    cluster: c-${context}`,
      `    user: u-${context}`,
      '',
    ].join('\n'),
  );
  return path;
}

const explicit = kubeconfig('explicit.yaml', 'https://explicit:6443', 'explicit');
const fromEnv = kubeconfig('env.yaml', 'https://env:6443', 'env');
const second = kubeconfig('second.yaml', 'https://second:6443', 'second');
const home = join(dir, 'home');
mkdirSync(join(home, '.kube'), { recursive: true });
writeFileSync(join(home, '.kube', 'config'), '');
kubeconfig('home/.kube/config', 'https://home:6443', 'home');
const noHome = join(dir, 'nohome');
const sa = join(dir, 'serviceaccount');
mkdirSync(sa);
writeFileSync(join(sa, 'token'), 'sa-token');

describe('loadKubeConfig picks the first source that exists', () => {
  const cases = [
    { name: 'explicit file wins over $KUBECONFIG', opts: { file: explicit, env: { KUBECONFIG: fromEnv }, homeDir: home }, source: 'file', server: 'https://explicit:6443' },
    { name: '$KUBECONFIG wins over ~/.kube/config', opts: { env: { KUBECONFIG: fromEnv }, homeDir: home }, source: 'env', server: 'https://env:6443' },
    { name: '$KUBECONFIG with two files: the first one\'s context', opts: { env: { KUBECONFIG: `${fromEnv}:${second}` }, homeDir: home }, source: 'env', server: 'https://env:6443' },
    { name: '~/.kube/config wins over in-cluster', opts: { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, homeDir: home, inClusterDir: sa }, source: 'home', server: 'https://home:6443' },
    { name: 'in-cluster when nothing else', opts: { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, homeDir: noHome, inClusterDir: sa }, source: 'in-cluster', server: 'https://10.0.0.1:443' },
  ] as const;
  for (const c of cases) {
    test(c.name, () => {
      // act
      const loaded = loadKubeConfig(c.opts);
      // assert
      assert.equal(loaded.source, c.source);
      assert.equal(loaded.server, c.server);
      assert.match(loaded.description, new RegExp(`server ${c.server}`));
    });
  }

  test('the description names the file it read', () => {
    const loaded = loadKubeConfig({ env: { KUBECONFIG: fromEnv }, homeDir: noHome });
    assert.equal(loaded.description, `kubeconfig ${fromEnv} (from $KUBECONFIG), context env, server https://env:6443`);
  });

  test('a second $KUBECONFIG file contributes its contexts', () => {
    const loaded = loadKubeConfig({ env: { KUBECONFIG: `${fromEnv}:${second}` }, homeDir: noHome, context: 'second' });
    assert.equal(loaded.server, 'https://second:6443');
  });
});

describe('loadKubeConfig errors name the file', () => {
  const missing = join(dir, 'missing.yaml');
  const garbage = join(dir, 'garbage.yaml');
  writeFileSync(garbage, 'clusters: [ {');
  const cases = [
    { name: 'missing explicit file', opts: { file: missing }, message: `${missing} (--kubeconfig) does not exist` },
    { name: 'missing $KUBECONFIG file', opts: { env: { KUBECONFIG: missing }, homeDir: home }, message: `${missing} ($KUBECONFIG) does not exist` },
    { name: 'unparsable file', opts: { file: garbage }, message: `${garbage} (--kubeconfig) is not a valid kubeconfig` },
    { name: 'unknown context', opts: { file: explicit, context: 'nope' }, message: `context "nope" not found in ${explicit}` },
    { name: 'in-cluster without a token', opts: { env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, homeDir: noHome, inClusterDir: join(dir, 'none') }, message: 'service account token' },
    { name: 'nothing at all', opts: { env: {}, homeDir: noHome }, message: 'no kubeconfig: none given, $KUBECONFIG unset' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.throws(
        () => loadKubeConfig(c.opts),
        (err: unknown) => err instanceof KubeConfigError && err.reason === 'InvalidKubeConfig' && err.message.includes(c.message),
        `expected a KubeConfigError mentioning ${c.message}`,
      );
    });
  }
});
