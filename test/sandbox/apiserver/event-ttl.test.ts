/**
 * Events expire as kube-apiserver's do (`--event-ttl`): a lease from their last write; watchers see
 * them DELETED; the audit log, which records requests, has no entry for it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EVENTS, type Resource } from '../../../shared/api/resources.ts';
import type { KubeObject } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { createClock } from '../../../sandbox/clock.ts';
import { startApiServer } from '../../../sandbox/apiserver/index.ts';

/** Events as the generic client's objects. */
const EV = EVENTS as unknown as Resource<KubeObject & { message?: string }>;

const event = (name: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Test', message: name, type: 'Normal' });

test('an Event goes a TTL after its last write, seen by watchers and not audited; a rewrite renews it', async () => {
  // arrange: a frozen clock, a 10-minute TTL
  const clock = createClock({ speed: 0, start: 0 });
  const server = await startApiServer({ clock, eventTtlMs: 600_000 });
  try {
    const kube = createKubeClient(server.kubeConfig('test'));
    await kube.create(EV, event('old'));
    await kube.create(EV, event('renewed'));
    clock.advance(300_000);
    const renewed = await kube.get(EV, 'default', 'renewed');
    await kube.update(EV, { ...renewed!, message: 'again' });
    const deletions: string[] = [];
    server.audit.subscribe((e) => void (e.type === 'DELETED' && deletions.push(e.name)));
    // act: past the first one's TTL, not the renewed one's
    clock.advance(330_000);
    const afterFirst = (await kube.list(EV, 'default')).items.map((e) => e.metadata?.name);
    clock.advance(600_000);
    const afterBoth = (await kube.list(EV, 'default')).items.map((e) => e.metadata?.name);
    // assert
    assert.deepEqual(afterFirst, ['renewed'], 'the old one expired, the rewritten one lives on');
    assert.deepEqual(afterBoth, []);
    assert.deepEqual(deletions, [], 'an expiry is no request: the audit log has no entry');
  } finally {
    await server.close();
    clock.dispose();
  }
});

test('without an eventTtlMs, Events live kube-apiserver\'s default hour', async () => {
  // arrange
  const clock = createClock({ speed: 0, start: 0 });
  const server = await startApiServer({ clock });
  try {
    const kube = createKubeClient(server.kubeConfig('test'));
    await kube.create(EV, event('e'));
    // act
    clock.advance(59 * 60_000);
    const before = (await kube.list(EV, 'default')).items.length;
    clock.advance(2 * 60_000);
    const after = (await kube.list(EV, 'default')).items.length;
    // assert
    assert.deepEqual([before, after], [1, 0]);
  } finally {
    await server.close();
    clock.dispose();
  }
});
