import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createClock, type Clock } from '../../../sandbox/clock.ts';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { clients, getPod, waitFor } from './helpers.ts';

// A frozen clock moved by hand: the grace period passes exactly when the test says so.
let sb: Sandbox;
let clock: Clock;
before(async () => {
  clock = createClock({ speed: 0 });
  sb = await startSandbox({ nodes: 1, clock, timings: { podStartupMs: 0 } });
});
after(async () => {
  await sb.stop();
  clock.dispose();
});

test('a gracefully deleted pod stays Terminating for its grace period, then the kubelet removes it', async () => {
  // arrange
  const { core } = clients(sb.apiServer.kubeConfig('test'));
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'graceful' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
  await waitFor('pod Running', async () => (await getPod(core, 'graceful'))?.status?.phase === 'Running');
  // act
  await core.deleteNamespacedPod({ namespace: 'default', name: 'graceful', gracePeriodSeconds: 30 });
  clock.advance(29_000);
  // assert: still there one simulated second before the end of the grace period
  await new Promise((r) => setTimeout(r, 100));
  const terminating = await getPod(core, 'graceful');
  assert.ok(terminating, 'pod still exists during its grace period');
  assert.ok(terminating.metadata?.deletionTimestamp, 'and is marked for deletion');
  // act
  clock.advance(2_000);
  // assert
  await waitFor('pod removed after grace', async () => (await getPod(core, 'graceful')) === undefined);
  const finalDelete = sb.apiServer.counters.count({ identity: 'node-sim', verb: 'delete', resource: 'pods' });
  assert.ok(finalDelete >= 1, 'the final delete came from the kubelet (node-sim)');
});
