/**
 * The VM controller's memory-dump decisions, table-driven against reference-vm-vmi-depth §7:
 * every phase of `status.memoryDumpRequest`, what it adds to or takes from the template and the
 * VMI, the claim annotation, and when it moves on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, Volume, VolumeStatus } from '../../../shared/api/index.ts';
import { dumpVolume, dumpVolumeWanted, planMemoryDump } from '../../../functions/vm/memorydump/decide.ts';

const root: Volume = { name: 'root', containerDisk: { image: 'x' } };
const dump = dumpVolume('dump-pvc');
const vm = (request: Partial<VirtualMachineMemoryDumpRequest> | undefined, volumes = [root]): VirtualMachine =>
  ({ metadata: { name: 'vm', namespace: 'default' }, spec: { template: { spec: { domain: { devices: {} }, volumes } } }, status: request ? { memoryDumpRequest: { claimName: 'dump-pvc', phase: 'Associating', ...request } } : {} }) as VirtualMachine;
const vmi = (volumes = [root], volumeStatus: VolumeStatus[] = [], phase = 'Running'): VirtualMachineInstance =>
  ({ metadata: { name: 'vm', namespace: 'default' }, spec: { domain: { devices: {} }, volumes }, status: { phase, volumeStatus } }) as VirtualMachineInstance;
const st = (phase: string, extra: Partial<VolumeStatus> = {}): VolumeStatus => ({ name: 'dump-pvc', target: '', phase, ...extra });
const names = (l: { name: string }[] | undefined) => l?.map((v) => v.name);

describe('memory dump requests', () => {
  test('table: each phase', () => {
    const cases: { name: string; vm: VirtualMachine; vmi?: VirtualMachineInstance; want: { template?: string[]; vmi?: string[]; annotate?: string; phase?: string | null; extra?: Record<string, unknown> } }[] = [
      { name: 'no request: nothing', vm: vm(undefined), vmi: vmi(), want: {} },
      { name: 'Associating, no running VMI: wait', vm: vm({}), vmi: vmi([root], [], 'Scheduled'), want: { phase: 'Associating' } },
      { name: 'Associating: the volume into template and VMI, InProgress', vm: vm({}), vmi: vmi(), want: { template: ['root', 'dump-pvc'], vmi: ['root', 'dump-pvc'], phase: 'InProgress' } },
      { name: 'Associating, already in both: InProgress only', vm: vm({}, [root, dump]), vmi: vmi([root, dump]), want: { phase: 'InProgress' } },
      { name: 'InProgress: the start time copied', vm: vm({ phase: 'InProgress' }, [root, dump]), vmi: vmi([root, dump], [st('MemoryDumpInProgress', { memoryDumpVolume: { claimName: 'dump-pvc', startTimestamp: 't0' } })]), want: { phase: 'InProgress', extra: { startTimestamp: 't0' } } },
      {
        name: 'InProgress + MemoryDumpCompleted: Unmounting with the end time and file name',
        vm: vm({ phase: 'InProgress', startTimestamp: 't0' }, [root, dump]),
        vmi: vmi([root, dump], [st('MemoryDumpCompleted', { memoryDumpVolume: { claimName: 'dump-pvc', startTimestamp: 't0', endTimestamp: 't1', targetFileName: 'f.memory.dump' } })]),
        want: { phase: 'Unmounting', extra: { endTimestamp: 't1', fileName: 'f.memory.dump' } },
      },
      { name: 'InProgress + MemoryDumpFailed: Failed with the message and the end time', vm: vm({ phase: 'InProgress' }, [root, dump]), vmi: vmi([root, dump], [st('MemoryDumpFailed', { message: 'no space', memoryDumpVolume: { claimName: 'dump-pvc', startTimestamp: 't0', endTimestamp: 't1' } })]), want: { phase: 'Failed', extra: { message: 'no space', endTimestamp: 't1', fileName: undefined } } },
      { name: 'Unmounting: the claim annotated, the volume out of the VMI (the template keeps it)', vm: vm({ phase: 'Unmounting', fileName: 'f.memory.dump' }, [root, dump]), vmi: vmi([root, dump], [st('MemoryDumpCompleted')]), want: { vmi: ['root'], annotate: 'f.memory.dump', phase: 'Unmounting' } },
      { name: 'Unmounting, still in the VMI status: wait', vm: vm({ phase: 'Unmounting', fileName: 'f' }, [root, dump]), vmi: vmi([root], [st('Detaching')]), want: { annotate: 'f', phase: 'Unmounting' } },
      { name: 'Unmounting, gone from the VMI: Completed', vm: vm({ phase: 'Unmounting', fileName: 'f' }, [root, dump]), vmi: vmi([root]), want: { annotate: 'f', phase: 'Completed' } },
      { name: 'Failed: annotated "Memory dump failed", the volume out of the VMI', vm: vm({ phase: 'Failed' }, [root, dump]), vmi: vmi([root, dump]), want: { vmi: ['root'], annotate: 'Memory dump failed', phase: 'Failed' } },
      { name: 'Completed: nothing', vm: vm({ phase: 'Completed' }, [root, dump]), vmi: vmi(), want: { phase: 'Completed' } },
      { name: 'remove: Dissociating, out of template and VMI', vm: vm({ phase: 'Completed', remove: true }, [root, dump]), vmi: vmi([root, dump]), want: { template: ['root'], vmi: ['root'], phase: 'Dissociating' } },
      { name: 'Dissociating, gone everywhere: the request dropped', vm: vm({ phase: 'Dissociating', remove: true }), vmi: vmi(), want: { phase: null } },
      { name: 'Dissociating without a VMI: the template only, then dropped', vm: vm({ phase: 'Dissociating', remove: true }, [root, dump]), want: { template: ['root'], phase: 'Dissociating' } },
    ];
    for (const c of cases) {
      // act
      const plan = planMemoryDump(c.vm, c.vmi);
      // assert
      assert.deepEqual(names(plan?.templateVolumes), c.want.template, `${c.name}: template`);
      assert.deepEqual(names(plan?.vmiVolumes), c.want.vmi, `${c.name}: vmi`);
      assert.equal(plan?.annotate?.value, c.want.annotate, `${c.name}: annotation`);
      if (c.want.phase === undefined) assert.equal(plan, undefined, c.name);
      else assert.equal(plan?.request?.phase ?? null, c.want.phase, `${c.name}: phase`);
      for (const [k, v] of Object.entries(c.want.extra ?? {})) assert.equal((plan?.request as unknown as Record<string, unknown>)[k], v, `${c.name}: ${k}`);
    }
  });

  test('the dump volume is hotpluggable and belongs in a new VMI only while the dump is under way', () => {
    assert.deepEqual(dump, { name: 'dump-pvc', memoryDump: { claimName: 'dump-pvc', hotpluggable: true } });
    const phases: [string, boolean][] = [['Associating', true], ['InProgress', true], ['Unmounting', false], ['Completed', false], ['Failed', false], ['Dissociating', false]];
    for (const [phase, want] of phases) assert.equal(dumpVolumeWanted({ claimName: 'c', phase }), want, phase);
  });
});
