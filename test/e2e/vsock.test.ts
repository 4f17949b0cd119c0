/**
 * VSOCK CIDs end to end (KubeVirt's `CIDsMap`, functions/vmi/vsock-cid.ts): `autoattachVSOCK` VMIs
 * created together are handed off each with its own guest CID in `status.VSOCKCID`, which the VMI
 * keeps; after the runtime restarts (its state table empty) a new VMI still gets a CID none of the
 * running ones carries, because the record is the VMIs' status. The nodes register vhost-vsock (the
 * VSOCK feature gate's device plugin), which the launcher pods ask for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { VMIS } from '../../shared/api/resources.ts';
import { newRuntime, NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

const VSOCK = { 'devices.kubevirt.io/vhost-vsock': '1k' };
let s: Slice;
/** Set once the slice's own runtime was stopped for the restart (stopped once only). */
let restarted = false;

before(async () => {
  s = await startSlice({ nodes: 2, nodeShapes: { node01: { resources: VSOCK }, node02: { resources: VSOCK } } });
});
after(async () => {
  if (restarted) await s?.sandbox.stop();
  else await s?.stop();
});

const vsockVmi = (name: string): VirtualMachineInstance => {
  const v = vmiManifest(name);
  v.spec.domain.devices.autoattachVSOCK = true;
  return v;
};

async function runningCids(names: readonly string[]): Promise<Map<string, number | undefined>> {
  await until(`${names.join(', ')} Running`, async () => (await Promise.all(names.map((n) => s.kube.get(VMIS, NS, n)))).every((v) => v?.status?.phase === 'Running'), { problems: s.problems });
  return new Map(await Promise.all(names.map(async (n) => [n, (await s.kube.get(VMIS, NS, n))?.status?.VSOCKCID] as const)));
}

describe('VSOCK CIDs', () => {
  test('VMIs created together each get a distinct guest CID at the hand-off', async () => {
    // arrange
    const names = ['vs-1', 'vs-2', 'vs-3', 'vs-4'];
    // act
    await Promise.all(names.map((n) => s.kube.create(VMIS, vsockVmi(n))));
    // assert
    const cids = await runningCids(names);
    const values = [...cids.values()];
    assert.ok(values.every((c) => c !== undefined && c >= 3), JSON.stringify([...cids]));
    assert.equal(new Set(values).size, names.length, `distinct: ${JSON.stringify([...cids])}`);
    const plain = vmiManifest('vs-none');
    await s.kube.create(VMIS, plain);
    assert.equal((await runningCids(['vs-none'])).get('vs-none'), undefined, 'no CID without autoattachVSOCK');
  });

  test('after a runtime restart (empty state table) a new VMI gets a CID no running VMI carries', async () => {
    // arrange
    const before = await runningCids(['vs-1', 'vs-2', 'vs-3', 'vs-4']);
    await s.rt.stop();
    restarted = true;
    const rt = newRuntime(s.sandbox, s.problems);
    rt.start();
    try {
      // act
      await s.kube.create(VMIS, vsockVmi('vs-5'));
      // assert
      const cid = (await runningCids(['vs-5'])).get('vs-5');
      assert.ok(cid !== undefined && ![...before.values()].includes(cid), `vs-5 got ${cid}; taken ${JSON.stringify([...before.values()])}`);
      assert.deepEqual(await runningCids(['vs-1', 'vs-2', 'vs-3', 'vs-4']), before, 'the running VMIs keep theirs');
    } finally {
      await rt.stop();
    }
  });
});
