/**
 * The disruption-budget controller end to end (issue 14): sandbox cluster ← relay → SQLite queue →
 * disruption-budget (and VMI) functions. After an upgrade from a KubeVirt older than v1.6.0 the
 * cluster still holds the PodDisruptionBudgets that version made for its VMIs (reference
 * node-drain-updates §4.4): the per-VMI `kubevirt-disruption-budget-*` one (grown to 2 with the
 * migration label during a migration) and the even older `kubevirt-migration-pdb-*`. The
 * controller deletes every PDB whose controller owner is a VMI of that name, and nothing else: a
 * user's PDB over the same launcher pods, owned by no VMI, stays. Each deletion is told by a
 * `SuccessfulDelete` event on the VMI, found the way `kubectl describe` and `diagnose` look for
 * events (by the involved object's kind and name).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { CONFIG_MAPS, EVENTS, PDBS, VMIS } from '../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NS, queueIdle, startSlice, until, vmiManifest, type Slice } from './support.ts';

interface EventRow {
  type?: string;
  reason?: string;
  message?: string;
  source?: { component?: string };
  involvedObject?: { kind?: string; name?: string; uid?: string };
}

/** A PDB as KubeVirt before v1.6.0 wrote it for `vmi`: controller owner the VMI, pods by created-by. */
function legacyPdb(vmi: VirtualMachineInstance, shape: { generateName: string; minAvailable: number; migrationName?: string }): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      generateName: shape.generateName,
      namespace: NS,
      ...(shape.migrationName ? { labels: { 'kubevirt.io/migrationName': shape.migrationName } } : {}),
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: vmi.metadata?.name ?? '', uid: vmi.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: { minAvailable: shape.minAvailable, selector: { matchLabels: { 'kubevirt.io/created-by': vmi.metadata?.uid ?? '' } } },
  };
}

describe('disruption-budget controller end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ nodes: 2 });
  });
  after(async () => {
    await s?.stop();
  });

  /** The events about the VMI `name`, by involved object (what describe and diagnose query). */
  async function eventsAbout(name: string): Promise<EventRow[]> {
    const list = (await s.kube.list(EVENTS, NS, { fieldSelector: `involvedObject.kind=VirtualMachineInstance,involvedObject.name=${name}` })) as { items: EventRow[] };
    return list.items;
  }

  test("an older KubeVirt's PDBs of a VMI are deleted, with an event each; a user's PDB over the same pods stays", async () => {
    // arrange: a running VMI, then the PDBs an older KubeVirt left (created as the upgrade finds them)
    await s.kube.create(VMIS, vmiManifest('pdb-legacy'));
    await until('pdb-legacy Running', async () => (await s.kube.get(VMIS, NS, 'pdb-legacy'))?.status?.phase === 'Running', { problems: s.problems });
    const vmi = (await s.kube.get(VMIS, NS, 'pdb-legacy'))!;
    const user = await s.kube.create(PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'users-own-budget', namespace: NS },
      spec: { minAvailable: 1, selector: { matchLabels: { 'kubevirt.io/created-by': vmi.metadata?.uid ?? '' } } },
    });
    // act
    const legacy = [
      await s.kube.create(PDBS, legacyPdb(vmi, { generateName: 'kubevirt-disruption-budget-', minAvailable: 1 })),
      await s.kube.create(PDBS, legacyPdb(vmi, { generateName: 'kubevirt-disruption-budget-', minAvailable: 2, migrationName: 'kubevirt-migrate-vm-abcde' })),
      await s.kube.create(PDBS, legacyPdb(vmi, { generateName: 'kubevirt-migration-pdb-', minAvailable: 2, migrationName: 'kubevirt-migrate-vm-fghij' })),
    ].map((p) => p.metadata?.name ?? '');
    await until('the legacy PDBs gone', async () => {
      const names = new Set((await s.kube.list(PDBS, NS)).items.map((p) => p.metadata?.name));
      return legacy.every((n) => !names.has(n));
    }, { problems: s.problems });
    await until('one SuccessfulDelete event per legacy PDB', async () => {
      const deleted = (await eventsAbout('pdb-legacy')).filter((e) => e.reason === 'SuccessfulDelete');
      return legacy.every((n) => deleted.some((e) => e.message === `Deleted PodDisruptionBudget ${n}`));
    }, { problems: s.problems });
    // Settled: the controller has seen everything (the user's PDB and the deletions' own events).
    await until('the disruption-budget queue idle', () => queueIdle(s, ['disruption-budget']), { problems: s.problems });
    // assert
    const left = (await s.kube.list(PDBS, NS)).items.map((p) => p.metadata?.name);
    assert.deepEqual(left, [user.metadata?.name], 'only the user’s PDB is left');
    const events = await eventsAbout('pdb-legacy');
    const deletes = events.filter((e) => e.reason === 'SuccessfulDelete' || e.reason === 'FailedDelete');
    assert.deepEqual(deletes.map((e) => e.message).sort(), legacy.map((n) => `Deleted PodDisruptionBudget ${n}`).sort(), 'one event per legacy PDB, none about the user’s');
    for (const e of deletes) {
      assert.equal(e.type, 'Normal');
      assert.equal(e.involvedObject?.uid, vmi.metadata?.uid, 'the event names the live VMI by UID');
      assert.ok(e.source?.component, 'the event says which component wrote it');
    }
    assert.equal((await s.kube.get(VMIS, NS, 'pdb-legacy'))?.status?.phase, 'Running', 'the VMI itself is untouched');
    console.log(`deleted ${legacy.join(', ')}; kept ${user.metadata?.name}; events: ${deletes.map((e) => `${e.type} ${e.reason} "${e.message}"`).join('; ')}`);
  });

  test('a PDB controlled by another kind is never touched, even one named and shaped like a legacy PDB of the VMI', async () => {
    // arrange: a VMI, a PDB of the legacy shape controlled by a ConfigMap (owners must exist: the
    // garbage collector removes a PDB whose owner is gone), and one legacy PDB as the witness that
    // the controller has looked at this VMI's PDBs
    await s.kube.create(VMIS, vmiManifest('pdb-other-owner'));
    await until('pdb-other-owner Running', async () => (await s.kube.get(VMIS, NS, 'pdb-other-owner'))?.status?.phase === 'Running', { problems: s.problems });
    const vmi = (await s.kube.get(VMIS, NS, 'pdb-other-owner'))!;
    const cm = await s.kube.create(CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pdb-other-owner', namespace: NS } });
    const other = await s.kube.create(PDBS, {
      ...legacyPdb(vmi, { generateName: 'kubevirt-disruption-budget-', minAvailable: 1 }),
      metadata: { generateName: 'kubevirt-disruption-budget-', namespace: NS, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'pdb-other-owner', uid: cm.metadata?.uid ?? '', controller: true }] },
    });
    // act
    const witness = (await s.kube.create(PDBS, legacyPdb(vmi, { generateName: 'kubevirt-disruption-budget-', minAvailable: 1 }))).metadata?.name ?? '';
    await until('the witness PDB gone', async () => !(await s.kube.get(PDBS, NS, witness)), { problems: s.problems });
    await until('the disruption-budget queue idle', () => queueIdle(s, ['disruption-budget']), { problems: s.problems });
    // assert: the pass that deleted the witness listed the other one too, and left it
    assert.ok(await s.kube.get(PDBS, NS, other.metadata?.name ?? ''), 'the PDB controlled by a ConfigMap is still there');
    const about = (await eventsAbout('pdb-other-owner')).filter((e) => /PodDisruptionBudget/.test(e.message ?? ''));
    assert.deepEqual(about.map((e) => e.message), [`Deleted PodDisruptionBudget ${witness}`]);
  });
});
