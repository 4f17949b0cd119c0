/**
 * The VSOCK CID allocator (functions/vmi/vsock-cid.ts, KubeVirt's `CIDsMap.Allocate`): a guest CID
 * (≥ 3) that no other VMI carries in `status.VSOCKCID`, reserved with a limit-1 lease in the state
 * table so two stateless workers racing on two VMIs never pick the same one; a retried hand-off of
 * the same VMI gets the same CID; a CID is free again once no VMI carries it and its reservation
 * is over.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { allocateCid, FIRST_GUEST_CID, probeStart, takenCids, VSOCK_RESERVATION_TTL_MS, vsockLease } from '../../../functions/vmi/vsock-cid.ts';

const NOW = 1_000_000;
const withCid = (uid: string, cid?: number) => ({ metadata: { uid }, spec: { domain: { devices: {} } }, status: cid === undefined ? {} : { VSOCKCID: cid } }) as VirtualMachineInstance;

describe('VSOCK CID allocation', () => {
  test('the probe starts at a guest CID derived from the UID', () => {
    // act
    const starts = ['a', 'b', 'c', 'd'].map(probeStart);
    // assert
    assert.ok(starts.every((c) => c >= FIRST_GUEST_CID && c <= 0xffffffff), JSON.stringify(starts));
    assert.equal(probeStart('a'), starts[0], 'the same UID, the same start');
    assert.equal(new Set(starts).size, 4);
  });

  test('a CID another VMI carries is skipped; the VMI\'s own is not counted as taken', async () => {
    // arrange
    const state = openSqliteState();
    const start = probeStart('x');
    const taken = takenCids([withCid('other', start), withCid('x', 77), withCid('none')], 'x');
    // act
    const cid = await allocateCid('x', 'ns/x/x', taken, state.leases, NOW);
    // assert
    assert.deepEqual([...taken], [start]);
    assert.equal(cid, start + 1);
  });

  test('two workers racing on two VMIs whose probes meet never get the same CID', async () => {
    // arrange: both start at the same CID (the second VMI's list does not show the first's yet)
    const state = openSqliteState();
    const uid = 'same-start';
    // act
    const [a, b] = await Promise.all([allocateCid(uid, 'ns/a/1', new Set(), state.leases, NOW), allocateCid(uid, 'ns/b/2', new Set(), state.leases, NOW)]);
    // assert
    assert.notEqual(a, b);
    assert.deepEqual([await state.leases.holders(vsockLease(a), NOW), await state.leases.holders(vsockLease(b), NOW)], [['ns/a/1'], ['ns/b/2']], 'each CID reserved by its own VMI alone');
  });

  test('a retried hand-off of the same VMI re-acquires its own reservation: the same CID', async () => {
    // arrange
    const state = openSqliteState();
    const first = await allocateCid('r', 'ns/r/r', new Set(), state.leases, NOW);
    // act
    const again = await allocateCid('r', 'ns/r/r', new Set(), state.leases, NOW + 1000);
    // assert
    assert.equal(again, first);
  });

  test('once the reservation is over and no VMI carries it, the CID is free again', async () => {
    // arrange
    const state = openSqliteState();
    const first = await allocateCid('gone', 'ns/g/1', new Set(), state.leases, NOW);
    // act: another VMI whose probe starts at the same point, after the reservation expired
    const later = await allocateCid('gone', 'ns/h/2', new Set(), state.leases, NOW + VSOCK_RESERVATION_TTL_MS + 1);
    // assert
    assert.equal(later, first);
  });

  test('every candidate reserved → a clear error', async () => {
    // arrange
    const state = openSqliteState();
    for (let i = 0; i < 3; i++) await state.leases.acquire(vsockLease(probeStart('full') + i), `other-${i}`, 1, NOW, VSOCK_RESERVATION_TTL_MS);
    // act + assert
    await assert.rejects(allocateCid('full', 'ns/f/f', new Set(), state.leases, NOW, 3), /no free VSOCK CID after 3 reserved candidates/);
  });
});
