/**
 * Traces on the DynamoDB state table, packed per invocation: the entries one invocation recorded
 * (a Lambda batch of up to 10 keys) are ONE item, their JSON compressed (deflate-raw) in `z`, the
 * keys they are about in the string set `ks`. DynamoDB bills a write by the started KB, never
 * less than one unit, so one item per reconcile cost 1 WRU each ($0.625 per million reconciles,
 * more than the rest of the table's bill); ten entries packed and compressed fit in about one.
 *
 * Layout: `pk = tracebatch#<controller>#<hour>` (the hour of the write, epoch ms / 3,600,000),
 * `sk` = the write time (zero-padded ms) and a random suffix, `expiresAt`, `ttl`. A read of one
 * key queries the hours of the TTL window newest first, with `contains(ks, :key)` so only items
 * about the key come back, and stops once it holds the entries it wants. A key with fewer entries
 * than asked for (the usual case for the default 50) makes the read walk every item of that
 * controller in the TTL window: billed by the size read, an operator's command, never a
 * reconcile's. One partition per controller and hour takes every write of
 * that controller: DynamoDB's 1,000 WCU per partition are about 5,000 reconciles per second per
 * controller at 2 WRU per batch of 10, far above the apiserver budget (docs/deploy-aws.md).
 *
 * Items of the earlier layout (`pk = trace#<controller>#<key>`, one per reconcile) are still read
 * until their TTL takes them, so an upgrade loses no trace.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call, traceKeyPrefix, ttlSeconds } from './dynamodb-table.ts';
import { TRACE_TTL_MS, traceLimit, type TraceEntry, type Traces } from './traces.ts';
import { requireName, requireTime } from './validate.ts';

/** The time bucket of a trace partition: one hour. */
export const TRACE_BUCKET_MS = 60 * 60 * 1000;

/** Above this many compressed bytes a batch is split over two items (DynamoDB's item limit is 400 KB). */
const MAX_PACKED_BYTES = 300 * 1024;

/** The partition of `controller`'s packed trace items written in the hour of `ms`. */
export const traceBatchPk = (controller: string, ms: number): string => `tracebatch#${controller}#${Math.floor(ms / TRACE_BUCKET_MS)}`;

/** One packed item as it is written. */
export interface PackedTraceItem {
  readonly pk: string;
  readonly sk: string;
  readonly ks: Set<string>;
  readonly z: Uint8Array;
  readonly expiresAt: number;
  readonly ttl: number;
}

/**
 * The items a batch of entries is written as: one per controller, split further only when the
 * compressed entries would pass {@link MAX_PACKED_BYTES}. Pure but for the sort key's random suffix.
 */
export function packTraceEntries(entries: readonly TraceEntry[], now: number): PackedTraceItem[] {
  const byController = new Map<string, TraceEntry[]>();
  for (const e of entries) {
    const list = byController.get(e.controller);
    if (list) list.push(e);
    else byController.set(e.controller, [e]);
  }
  const items: PackedTraceItem[] = [];
  const pack = (controller: string, part: readonly TraceEntry[]): void => {
    const z = deflateRawSync(JSON.stringify(part));
    if (z.length > MAX_PACKED_BYTES && part.length > 1) {
      const half = Math.ceil(part.length / 2);
      pack(controller, part.slice(0, half));
      pack(controller, part.slice(half));
      return;
    }
    // The random suffix keeps two invocations of the same millisecond apart.
    const sk = `${String(Math.max(0, Math.trunc(now))).padStart(15, '0')}#${randomBytes(4).toString('hex')}`;
    items.push({ pk: traceBatchPk(controller, now), sk, ks: new Set(part.map((e) => e.key)), z, expiresAt: now + TRACE_TTL_MS, ttl: ttlSeconds(now + TRACE_TTL_MS) });
  };
  for (const [controller, part] of byController) pack(controller, part);
  return items;
}

/**
 * The write units one packed item costs: DynamoDB sizes an item as its attribute names plus
 * values (strings by UTF-8 length, numbers up to 21 bytes, binary by length) and bills every
 * started KB.
 */
export function packedItemWrus(item: PackedTraceItem): number {
  const str = (s: string) => Buffer.byteLength(s);
  const bytes =
    str('pk') + str(item.pk) + str('sk') + str(item.sk) + str('ks') + [...item.ks].reduce((n, k) => n + str(k), 0) + str('z') + item.z.length + str('expiresAt') + 21 + str('ttl') + 21;
  return Math.max(1, Math.ceil(bytes / 1024));
}

/** The Traces port over the state table. */
export function dynamoTraces(doc: DynamoDBDocumentClient, tableName: string): Traces {
  const recordBatch: Traces['recordBatch'] = async (entries, now) => {
    for (const entry of entries) {
      requireName('controller', entry.controller);
      requireName('key', entry.key);
    }
    requireTime('now', now);
    await Promise.all(packTraceEntries(entries, now).map((Item) => call('PutItem', () => doc.send(new PutCommand({ TableName: tableName, Item })))));
  };

  /** The newest entries of `key` in one partition, newest item first, until `want` are held. */
  const fromPartition = async (pk: string, key: string, now: number, want: number, packed: boolean): Promise<TraceEntry[]> => {
    const found: TraceEntry[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await call('Query', () =>
        doc.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            // DynamoDB's TTL deletes lazily: an item past its expiry may still be there.
            FilterExpression: packed ? 'expiresAt > :now AND contains(ks, :key)' : 'expiresAt > :now',
            ExpressionAttributeValues: { ':pk': pk, ':now': now, ...(packed ? { ':key': key } : {}) },
            ScanIndexForward: false,
            ConsistentRead: true,
            ...(packed ? {} : { Limit: want }),
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of out.Items ?? []) {
        if (packed) {
          const entries = JSON.parse(inflateRawSync((item as { z: Uint8Array }).z).toString('utf8')) as TraceEntry[];
          found.push(...entries.filter((e) => e.key === key));
        } else {
          found.push(JSON.parse((item as { e: string }).e) as TraceEntry);
        }
      }
      start = packed ? out.LastEvaluatedKey : undefined;
    } while (start && found.length < want);
    return found;
  };

  return {
    record: (entry, now) => recordBatch([entry], now),
    recordBatch,
    async recent(controller, key, now, limit) {
      requireName('controller', controller);
      requireName('key', key);
      const want = traceLimit(limit);
      const found: TraceEntry[] = [];
      // Newest hour first; an entry lives TRACE_TTL_MS, so the oldest hour that can hold one is now - TTL's.
      for (let ms = now; found.length < want && Math.floor(ms / TRACE_BUCKET_MS) >= Math.floor((now - TRACE_TTL_MS) / TRACE_BUCKET_MS); ms -= TRACE_BUCKET_MS) {
        found.push(...(await fromPartition(traceBatchPk(controller, ms), key, now, want - found.length, true)));
      }
      if (found.length < want) found.push(...(await fromPartition(traceKeyPrefix(controller, key), key, now, want - found.length, false)));
      return found.sort((a, b) => a.receivedAt - b.receivedAt).slice(-want);
    },
  };
}
