/**
 * Table tests of a relay mapper: each case feeds a sequence of watch events to a fresh mapper and
 * checks the keys the last one wakes, all for one controller (the earlier events build the
 * mapper's own indexes: PDB owners, node taints, heartbeats…). The previous object of an event
 * reaches the mapper as the relay's reflector passes it, a stub of its metadata (no spec, no
 * status): a mapper that compares versions must remember what it compares itself.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Controller } from '../../shared/controllers.ts';
import type { EventMapper, EventType, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';
import { stubOf } from '../../functions/relay/reflector.ts';

/** One watch event: kind, type, object, and the previous object for a MODIFIED. */
export type MapperEvent = [WatchedKind, EventType, object, object?];

/** `[name, events in order, keys the last event wakes]`. */
export type MapperCase = [string, MapperEvent[], string[]];

export function describeMapperCases(title: string, controller: Controller, make: () => EventMapper, cases: readonly MapperCase[]): void {
  describe(title, () => {
    for (const [name, events, want] of cases) {
      test(name, () => {
        // arrange
        const map = make();
        const last = events.at(-1)!;
        const relayOld = (o: object | undefined) => (o ? stubOf(o as WatchedObject) : undefined);
        for (const [kind, type, obj, old] of events.slice(0, -1)) map(kind, type, obj, relayOld(old));
        // act
        const got = map(last[0], last[1], last[2], relayOld(last[3]));
        // assert
        assert.deepEqual(got.map((k) => k.key), want);
        assert.ok(got.every((k) => k.controller === controller));
      });
    }
  });
}
