/**
 * Each controller's Events carry KubeVirt's source component for it (the live differential lane
 * found every one of ours as `virtualmachine-controller`): the recorders pass it, and the client
 * writes it as `source.component` and `reportingComponent`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cloneEvent } from '../../../functions/clone/events.ts';
import { poolEvent } from '../../../functions/pool/events.ts';
import { restoreEvent } from '../../../functions/restore/events.ts';
import { snapshotEvent } from '../../../functions/snapshot/events.ts';
import type { EventInput } from '../../../shared/kube/client.ts';
import { genericKubeClient, type Transport } from '../../../shared/kube/requests.ts';
import { EVENT_COMPONENT } from '../../../shared/reconcile/event-components.ts';
import { eventRecorder, recordEvent } from '../../../shared/reconcile/events.ts';

const log = { info: () => undefined, warn: () => undefined, error: () => undefined, with: () => log } as never;

function capture(): { deps: never; sent: EventInput[] } {
  const sent: EventInput[] = [];
  return { sent, deps: { kube: { createEvent: async (e: EventInput) => void sent.push(e) }, log, now: () => 0 } as never };
}

const obj = { metadata: { name: 'x', namespace: 'ns', uid: 'u' } };

describe("Event source components: KubeVirt's recorder name per controller", () => {
  const cases: ReadonlyArray<{ name: string; emit: (deps: never) => Promise<void>; want: string }> = [
    { name: 'snapshot controller', emit: (d) => snapshotEvent(d, 'VirtualMachineSnapshot', obj, 'Normal', 'SuccessfulVirtualMachineSnapshot', 'done'), want: 'snapshot-controller' },
    { name: 'snapshot content (the snapshot controller)', emit: (d) => snapshotEvent(d, 'VirtualMachineSnapshotContent', obj, 'Normal', 'Created', 'done'), want: 'snapshot-controller' },
    { name: 'restore controller', emit: (d) => restoreEvent(d, obj as never, 'Normal', 'VirtualMachineRestoreComplete', 'done'), want: 'restore-controller' },
    { name: 'clone controller', emit: (d) => cloneEvent(d, obj as never, 'CloneSucceeded', 'done'), want: 'clone-controller' },
    { name: 'pool controller', emit: (d) => poolEvent(d, obj, 'Normal', 'SuccessfulCreate', 'done'), want: 'virtualmachinepool-controller' },
    { name: 'a recorder made for the export controller', emit: (d) => eventRecorder('export.kubevirt.io/v1', 'VirtualMachineExport', EVENT_COMPONENT.export)(d, obj, 'Normal', 'x', 'y'), want: 'export-controller' },
    { name: 'the node controller', emit: (d) => recordEvent(d, { apiVersion: 'v1', kind: 'Node', name: 'n' }, 'Normal', 'NodeUnresponsive', 'm', EVENT_COMPONENT.node), want: 'node-controller' },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.want}`, async () => {
      // arrange
      const { deps, sent } = capture();
      // act
      await c.emit(deps);
      // assert
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.component, c.want);
    });
  }

  test("the client writes the input's component, else its default", async () => {
    // arrange
    const bodies: Array<{ source?: { component?: string }; reportingComponent?: string }> = [];
    const kube = genericKubeClient({ send: async (o) => void bodies.push(o.body as never) } as Transport, { component: 'virtualmachine-controller' });
    const input: EventInput = { involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'ns' }, type: 'Normal', reason: 'R', message: 'M' };
    // act
    await kube.createEvent({ ...input, component: 'restore-controller' });
    await kube.createEvent(input);
    // assert
    assert.deepEqual([bodies[0]?.source?.component, bodies[0]?.reportingComponent], ['restore-controller', 'restore-controller']);
    assert.equal(bodies[1]?.source?.component, 'virtualmachine-controller', "without one, the client's");
  });
});
