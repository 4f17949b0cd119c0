/**
 * The simulated virt-handler's hotplug step (reference-vm-vmi-depth §3.2 "Phases set by
 * virt-handler"), table-driven: mount once the attachment pod's UID is written, attach to the
 * domain (Ready, a disk target), unmount a volume gone from the spec; nothing else moves.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FAIL_MEMORY_DUMP_ANNOTATION, nextHotplugVolumeStatus } from '../../../sandbox/nodes/hotplug-volumes.ts';

type Entry = { name: string; target?: string; phase?: string; hotplugVolume?: { attachPodName?: string; attachPodUID?: string } };

function vmi(specVolumes: string[], status: Entry[], utility: string[] = []) {
  return { spec: { volumes: specVolumes.map((name) => ({ name })), utilityVolumes: utility.map((name) => ({ name })) }, status: { volumeStatus: status } };
}

describe('virt-handler hotplug step', () => {
  test('table: one phase per step, virt-handler\'s reasons and messages', () => {
    const pod = { attachPodName: 'p', attachPodUID: 'uid' };
    const cases: { name: string; vmi: ReturnType<typeof vmi>; want?: Partial<Entry> & { reason?: string; message?: string } }[] = [
      { name: 'AttachedToNode without a pod UID waits', vmi: vmi(['x'], [{ name: 'x', phase: 'AttachedToNode', hotplugVolume: { attachPodName: 'p' } }]) },
      { name: 'AttachedToNode with the UID: mounted', vmi: vmi(['x'], [{ name: 'x', phase: 'AttachedToNode', hotplugVolume: pod }]), want: { phase: 'MountedToPod', reason: 'VolumeMountedToPod', message: 'Volume x has been mounted in virt-launcher pod' } },
      { name: 'MountedToPod: attached', vmi: vmi(['x'], [{ name: 'x', target: '', phase: 'MountedToPod', hotplugVolume: pod }]), want: { phase: 'Ready', target: 'sda', reason: 'VolumeReady', message: 'Successfully attach hotplugged volume x to VM' } },
      { name: 'the next free target', vmi: vmi(['x', 'y'], [{ name: 'x', target: 'sda', phase: 'Ready', hotplugVolume: pod }, { name: 'y', target: '', phase: 'MountedToPod', hotplugVolume: pod }]), want: { name: 'y', target: 'sdb', phase: 'Ready' } },
      { name: 'Ready and in the spec: nothing', vmi: vmi(['x'], [{ name: 'x', target: 'sda', phase: 'Ready', hotplugVolume: pod }]) },
      { name: 'unplugged: unmounted', vmi: vmi([], [{ name: 'x', target: 'sda', phase: 'Ready', hotplugVolume: pod }]), want: { phase: 'UnMountedFromPod', target: '', reason: 'VolumeUnMountedFromPod', message: 'Volume x has been unmounted from virt-launcher pod' } },
      { name: 'a utility volume stops at MountedToPod', vmi: vmi([], [{ name: 'u', phase: 'MountedToPod', hotplugVolume: pod }], ['u']) },
      { name: 'not a hotplug entry', vmi: vmi([], [{ name: 'persistent-state-for-this-vm', target: '' }]) },
    ];
    for (const c of cases) {
      // act
      const next = nextHotplugVolumeStatus(c.vmi as never);
      // assert
      const want = c.want;
      if (!want) {
        assert.equal(next, undefined, c.name);
        continue;
      }
      const got = next?.find((s) => s.name === (want.name ?? c.vmi.status.volumeStatus[0]!.name));
      for (const [k, v] of Object.entries(want)) assert.equal(got?.[k], v, `${c.name}: ${k}`);
    }
  });
});

describe('virt-handler memory dump step (reference-vm-vmi-depth §7)', () => {
  const pod = { attachPodName: 'p', attachPodUID: 'uid' };
  const dumpVmi = (status: Record<string, unknown>[], inSpec = true, annotations: Record<string, string> = {}) => ({
    metadata: { name: 'vm', annotations },
    spec: { volumes: inSpec ? [{ name: 'd', memoryDump: { claimName: 'd', hotpluggable: true } }] : [] },
    status: { volumeStatus: status },
  });
  test('table: mounted → dump in progress (start time) → completed (end time, file name); unplugged after', () => {
    const now = '2026-12-01T23:50:55Z';
    const cases: { name: string; vmi: ReturnType<typeof dumpVmi>; want: Record<string, unknown> | undefined }[] = [
      { name: 'mounted: the dump starts, no disk target', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MountedToPod', hotplugVolume: pod, memoryDumpVolume: { claimName: 'd' } }]), want: { phase: 'MemoryDumpInProgress', target: '', memoryDumpVolume: { claimName: 'd', startTimestamp: now } } },
      { name: 'in progress: completed', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MemoryDumpInProgress', hotplugVolume: pod, memoryDumpVolume: { claimName: 'd', startTimestamp: 't0' } }]), want: { phase: 'MemoryDumpCompleted', target: '', memoryDumpVolume: { claimName: 'd', startTimestamp: 't0', endTimestamp: now, targetFileName: 'vm-d-20261201-235055.memory.dump' } } },
      { name: 'in progress on a VMI told to fail: failed (end time, virt-handler\'s message, no file)', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MemoryDumpInProgress', hotplugVolume: pod, memoryDumpVolume: { claimName: 'd', startTimestamp: 't0' } }], true, { [FAIL_MEMORY_DUMP_ANNOTATION]: 'no space left on device' }), want: { phase: 'MemoryDumpFailed', target: '', message: 'Memory dump to pvc d failed: no space left on device', memoryDumpVolume: { claimName: 'd', startTimestamp: 't0', endTimestamp: now } } },
      { name: 'failed and gone from the spec: unmounted', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MemoryDumpFailed', hotplugVolume: pod }], false), want: { phase: 'UnMountedFromPod', target: '' } },
      { name: 'completed and still in the spec: nothing', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MemoryDumpCompleted', hotplugVolume: pod }]), want: undefined },
      { name: 'completed and gone from the spec: unmounted', vmi: dumpVmi([{ name: 'd', target: '', phase: 'MemoryDumpCompleted', hotplugVolume: pod }], false), want: { phase: 'UnMountedFromPod', target: '' } },
    ];
    for (const c of cases) {
      // act
      const next = nextHotplugVolumeStatus(c.vmi as never, now)?.[0];
      // assert
      const fields = ['phase', 'target', 'memoryDumpVolume', ...(c.want && 'message' in c.want ? ['message'] : [])];
      const got = next ? Object.fromEntries(Object.entries(next).filter(([k]) => fields.includes(k))) : undefined;
      assert.deepEqual(got, c.want, c.name);
    }
  });
});
