/**
 * `trace` without a cluster: target parsing, which keys a trace follows (a VM's VMI, a VMI's
 * migrations from the cluster and from the writes), and the timeline's rows and order.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BadTargetError, parseTarget } from '../../ops/target.ts';
import { collectTrace } from '../../ops/trace/collect.ts';
import { timeline } from '../../ops/trace/timeline.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';

const T = 1_700_000_000_000;

function entry(controller: string, key: string, at: number, over: Partial<TraceEntry> = {}): TraceEntry {
  const [namespace = '', name = ''] = key.split('/');
  return {
    controller,
    key,
    cause: { kind: 'VirtualMachine', namespace, name, resourceVersion: String(at), event: 'ADDED', seenAt: T + at - 5 },
    enqueuedAt: T + at - 3,
    receivedAt: T + at,
    attempt: 1,
    coalesced: 1,
    outcome: { kind: 'done' },
    reads: 2,
    writes: [],
    durationMs: 4,
    ...over,
  };
}

describe('parseTarget', () => {
  test('table: kinds and aliases; bad input says what was expected', () => {
    // arrange
    const good: [string, string][] = [['pool/default/p', 'pool default/p'], ['vmi/default/a', 'vmi default/a'], ['VirtualMachine/ns1/b', 'vm ns1/b'], ['vmim/default/m', 'migration default/m'], ['vmirs/default/rs', 'replicaset default/rs'], ['node/node01', 'node node01'], ['nodes/node-2', 'node node-2']];
    const bad = ['', 'vmi/default', 'pod/default/x', 'vmi/Default/x', 'vmi/a/b/c', 'node/default/node01', 'node/Node01', 'replicaset/rs'];
    // act / assert
    for (const [text, want] of good) {
      const t = parseTarget(text);
      assert.equal(`${t.kind} ${t.key}`, want);
    }
    for (const text of bad) assert.throws(() => parseTarget(text), BadTargetError, text);
  });
});

describe('collectTrace', () => {
  const store = new Map<string, TraceEntry[]>([
    ['vm default/x', [entry('vm', 'default/x', 0, { writes: [{ verb: 'create', resource: 'virtualmachineinstances', namespace: 'default', name: 'x', code: 201 }] })]],
    ['vmi default/x', [entry('vmi', 'default/x', 10, { writes: [{ verb: 'create', resource: 'pods', namespace: 'default', name: 'virt-launcher-x-abcde', code: 201 }, { verb: 'create', resource: 'virtualmachineinstancemigrations', namespace: 'default', name: 'evac', code: 201 }] })]],
    ['migration default/evac', [entry('migration', 'default/evac', 20, { writes: [{ verb: 'create', resource: 'pods', namespace: 'default', name: 'virt-launcher-x-target', code: 201 }] })]],
    ['migration default/user', [entry('migration', 'default/user', 30)]],
  ]);
  const traces = { recent: async (c: string, k: string) => store.get(`${c} ${k}`) ?? [] };

  test('a VM: its VMI, the migrations the cluster lists and those the traces created, the pods written; oldest first', async () => {
    // arrange
    const src = { traces, now: T + 100, migrationsOf: async () => ['user'] };
    // act
    const t = await collectTrace(parseTarget('vm/default/x'), src);
    // assert
    assert.deepEqual(t.links.map((l) => `${l.controller} ${l.key} ${l.reconciles}`), ['vm default/x 1', 'vmi default/x 1', 'migration default/user 1', 'migration default/evac 1']);
    assert.deepEqual(t.pods, ['default/virt-launcher-x-abcde', 'default/virt-launcher-x-target']);
    assert.deepEqual(t.entries.map((e) => e.controller), ['vm', 'vmi', 'migration', 'migration']);
  });

  test('a pool: the VMs it created, each VM\'s VMI, followed through the writes', async () => {
    // arrange
    const pool = new Map<string, TraceEntry[]>([
      ['pool default/p', [entry('pool', 'default/p', 0, { writes: [{ verb: 'create', resource: 'virtualmachines', namespace: 'default', name: 'p-0', code: 201 }] })]],
      ['vm default/p-0', [entry('vm', 'default/p-0', 5, { writes: [{ verb: 'create', resource: 'virtualmachineinstances', namespace: 'default', name: 'p-0', code: 201 }] })]],
      ['vmi default/p-0', [entry('vmi', 'default/p-0', 9)]],
    ]);
    // act
    const t = await collectTrace(parseTarget('pool/default/p'), { traces: { recent: async (c: string, k: string) => pool.get(`${c} ${k}`) ?? [] }, now: T + 100 });
    // assert
    assert.deepEqual(t.links.map((l) => `${l.controller} ${l.key} ${l.why}`), ['pool default/p the object', 'vm default/p-0 created by pool default/p', 'vmi default/p-0 created by vm default/p-0']);
  });

  test('a VMI: the VM controller counts only where it wrote the VMI', async () => {
    // arrange
    const src = { traces: { recent: async (c: string, k: string) => (c === 'vm' ? [entry('vm', k, 0), ...(store.get(`vm ${k}`) ?? [])] : (store.get(`${c} ${k}`) ?? [])) }, now: T + 100 };
    // act
    const t = await collectTrace(parseTarget('vmi/default/x'), src);
    // assert
    assert.equal(t.links.find((l) => l.controller === 'vm')?.reconciles, 1);
  });
});

test('timeline: event, message, reconcile and each write in order; a retry of the same event shows no new event row', () => {
  // arrange
  const first = entry('vmi', 'default/x', 0, { outcome: { kind: 'retry', reason: 'Conflict', message: 'modified' }, writes: [{ verb: 'update', resource: 'virtualmachineinstances', namespace: 'default', name: 'x', code: 409 }] });
  const retry = { ...entry('vmi', 'default/x', 50), cause: first.cause, attempt: 2 };
  // act
  const rows = timeline([retry, first]);
  // assert
  assert.deepEqual(rows.map((r) => `${r.step}: ${r.text}`), [
    'event: ADDED VirtualMachine default/x (resourceVersion 0)',
    'message: enqueued; received 3 ms later, attempt 1',
    'reconcile: 4 ms, 2 reads, 1 write → retry (Conflict: modified)',
    'write: update virtualmachineinstances default/x → 409',
    'message: enqueued; received 3 ms later, attempt 2',
    'reconcile: 4 ms, 2 reads, no writes → done',
  ]);
});
