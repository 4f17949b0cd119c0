/**
 * A pass woken by the VMI's own event knows its UID up front, so the VMI controller sends the VMI
 * read and the pod list together (one round trip less before a new VMI's launcher pod). The early
 * list stands in for the usual one only when it is of that VMI and no older than the VMI read;
 * otherwise the pods are listed after the VMI, as without the hint. Against the sandbox API
 * server (no simulated nodes), with the embedded state store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VmiDeps } from '../../../functions/vmi/deps.ts';
import { earlyPodList } from '../../../functions/vmi/early-pod-list.ts';
import { reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { CREATED_BY_LABEL, KIND_VMI } from '../../../shared/api/well-known.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient, ListResult } from '../../../shared/kube/client.ts';
import { isAtLeastRevision } from '../../../shared/kube/resource-version.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { NS, vmiManifest } from '../../e2e/support.ts';

const stateOf = (st: ReturnType<typeof openSqliteState>) => ({ expectations: st.expectations, leases: st.leases });

let server: ApiServer;
before(async () => {
  server = await startApiServer({ port: 0 });
});
after(async () => {
  await server.close();
});

/** The controller's client with every call logged as `start <verb> <resource>` / `end …`, and list answers optionally rewritten. */
function traced(kube: KubeClient, rewriteList?: (l: ListResult<unknown>) => ListResult<unknown>): { kube: KubeClient; log: string[] } {
  const log: string[] = [];
  const wrapped = new Proxy(kube, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        const what = `${String(prop)} ${(args[0] as { plural?: string }).plural ?? ''}`;
        log.push(`start ${what}`);
        let out = (await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        if (prop === 'list' && rewriteList) out = rewriteList(out as ListResult<unknown>);
        log.push(`end ${what}`);
        return out;
      };
    },
  });
  return { kube: wrapped, log };
}

function depsWith(kube: KubeClient): VmiDeps {
  const config = clusterConfigFromKubeVirt(undefined);
  return { kube, ...stateOf(openSqliteState()), clusterConfig: async () => config, now: () => Date.now(), log: silentLogger };
}

const user = () => createKubeClient(server.kubeConfig('test'));
const podsOf = async (uid: string) => (await user().list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${uid}` })).items;

describe('the VMI read and the pod list together, on a VMI event', () => {
  test('the list goes out before the VMI read answers, and the pass creates the one launcher pod', async () => {
    // arrange
    const vmi = await user().create(VMIS, vmiManifest('early-list'));
    const { kube, log } = traced(createKubeClient(server.kubeConfig('vmi-controller')));
    // act
    await reconcileVmi(`${NS}/early-list`, depsWith(kube), { cause: { kind: KIND_VMI, uid: vmi.metadata?.uid ?? '' }, minResourceVersion: vmi.metadata?.resourceVersion ?? '' });
    // assert
    assert.deepEqual(log.slice(0, 2), ['start get virtualmachineinstances', 'start list pods'], 'both reads sent before either answered');
    assert.equal(log.filter((l) => l === 'start list pods').length, 1, 'the early list was used: no second list');
    assert.equal((await podsOf(vmi.metadata?.uid ?? '')).length, 1);
  });

  test('without the hint, or woken by another object, the pods are listed after the VMI read', async () => {
    // arrange
    const vmi = await user().create(VMIS, vmiManifest('late-list'));
    const { kube, log } = traced(createKubeClient(server.kubeConfig('vmi-controller')));
    // act
    await reconcileVmi(`${NS}/late-list`, depsWith(kube), { cause: { kind: 'Pod', uid: 'some-pod-uid' } });
    // assert
    assert.deepEqual(log.slice(0, 3), ['start get virtualmachineinstances', 'end get virtualmachineinstances', 'start list pods']);
    assert.equal((await podsOf(vmi.metadata?.uid ?? '')).length, 1);
  });

  test('a list older than the VMI read is not used: the pods are listed again, and a pod it missed is not created twice', async () => {
    // arrange: the VMI has its launcher pod; the early list is made to look older than the VMI read and empty
    const vmi = await user().create(VMIS, vmiManifest('stale-list'));
    const uid = vmi.metadata?.uid ?? '';
    const deps = depsWith(createKubeClient(server.kubeConfig('vmi-controller')));
    await reconcileVmi(`${NS}/stale-list`, deps);
    assert.equal((await podsOf(uid)).length, 1);
    let first = true;
    const { kube, log } = traced(createKubeClient(server.kubeConfig('vmi-controller')), (l) => {
      if (!first) return l;
      first = false;
      return { ...l, items: [], resourceVersion: '1' };
    });
    // act
    await reconcileVmi(`${NS}/stale-list`, { ...deps, kube }, { cause: { kind: KIND_VMI, uid } });
    // assert
    assert.equal(log.filter((l) => l === 'start list pods').length, 2, 'the stale early list was set aside');
    assert.equal((await podsOf(uid)).length, 1, 'no second launcher pod');
  });

  test('a VMI re-created under the same name: the hint names the old UID, and the new VMI gets its own pod', async () => {
    // arrange
    const old = await user().create(VMIS, vmiManifest('recreated'));
    await user().delete(VMIS, NS, 'recreated');
    const now = await user().create(VMIS, vmiManifest('recreated'));
    const { kube, log } = traced(createKubeClient(server.kubeConfig('vmi-controller')));
    // act
    await reconcileVmi(`${NS}/recreated`, depsWith(kube), { cause: { kind: KIND_VMI, uid: old.metadata?.uid ?? '' } });
    // assert
    assert.equal(log.filter((l) => l === 'start list pods').length, 2, 'the old UID\'s list was set aside');
    assert.equal((await podsOf(now.metadata?.uid ?? '')).length, 1);
  });
});

describe('earlyPodList and isAtLeastRevision (pure)', () => {
  const vmi = (uid: string, rv: string) => ({ metadata: { uid, resourceVersion: rv } }) as VirtualMachineInstance;
  const list = (rv: string | undefined): ListResult<V1Pod> => ({ items: [], resourceVersion: rv });
  const cases: [string, ListResult<V1Pod>, string | undefined, VirtualMachineInstance, boolean][] = [
    ['same UID, list newer', list('12'), 'u', vmi('u', '10'), true],
    ['same UID, same revision', list('10'), 'u', vmi('u', '10'), true],
    ['same UID, list older', list('9'), 'u', vmi('u', '10'), false],
    ['another UID', list('12'), 'old', vmi('u', '10'), false],
    ['no hint', list('12'), undefined, vmi('u', '10'), false],
    ['list without a revision', list(undefined), 'u', vmi('u', '10'), false],
    ['not a decimal revision', list('abc'), 'u', vmi('u', '10'), false],
  ];
  for (const [name, l, hint, v, used] of cases) {
    test(name, () => assert.equal(earlyPodList(l, hint, v) === l, used));
  }
  test('revisions beyond 2^53 compare exactly', () => {
    assert.equal(isAtLeastRevision('9007199254740993', '9007199254740992'), true);
    assert.equal(isAtLeastRevision('9007199254740992', '9007199254740993'), false);
  });
});
