/**
 * How the relay lists each watched resource: every kind pages with limit/continue, typed core
 * lists (pods, PVCs) included — client-node's typed models spell the token `_continue`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WAKES } from '../../../functions/wakes.ts';
import { watchedResources } from '../../../functions/relay/resources.ts';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { PODS } from '../../../shared/api/resources.ts';

let api: ApiServer;

before(async () => {
  api = await startApiServer();
  const kube = createKubeClient(api.kubeConfig('test'));
  for (let i = 0; i < 3; i++) {
    await kube.create(PODS, { metadata: { namespace: 'default', name: `page-${i}`, labels: { 'kubevirt.io': 'virt-launcher' } }, spec: { containers: [{ name: 'compute', image: 'x' }] } });
  }
});
after(async () => {
  await api.close();
});

test('every watched resource lists page by page until the continue token runs out', async () => {
  // arrange
  const resources = watchedResources(api.kubeConfig('relay'), WAKES);
  const pods = resources.find((r) => r.kind === 'Pod');
  assert.ok(pods, 'pods are watched');
  // act
  const names: string[] = [];
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await pods.list(2, token);
    names.push(...page.items.map((o) => o.metadata?.name ?? ''));
    token = page.continueToken;
    pages++;
  } while (token && pages < 10);
  // assert
  assert.deepEqual(names.sort(), ['page-0', 'page-1', 'page-2'], `pods listed over ${pages} page(s): the continue token was lost`);
  assert.equal(pages, 2);
});
