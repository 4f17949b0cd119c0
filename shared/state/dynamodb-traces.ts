/**
 * Traces on the DynamoDB state table: one item per reconcile, `pk = trace#<controller>#<key>`,
 * `sk` = the reconcile's start time (zero-padded ms) and a random suffix, the entry as a JSON
 * string, and the table's `ttl`. Recording is one PutItem and nothing else — no read, no delete:
 * a read takes the newest {@link TRACE_ENTRIES_PER_KEY} items of the key (a descending Query
 * with a limit), so older items are never seen again and the TTL deletes them.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call, traceKeyPrefix, ttlSeconds } from './dynamodb-table.ts';
import { TRACE_TTL_MS, traceLimit, type TraceEntry, type Traces } from './traces.ts';
import { requireName, requireTime } from './validate.ts';

/** The Traces port over the state table. */
export function dynamoTraces(doc: DynamoDBDocumentClient, tableName: string): Traces {
  return {
    async record(entry, now) {
      requireName('controller', entry.controller);
      requireName('key', entry.key);
      requireTime('now', now);
      // The random suffix keeps two entries of the same millisecond (a redelivery) apart.
      const sk = `${String(Math.max(0, Math.trunc(entry.receivedAt))).padStart(15, '0')}#${randomBytes(4).toString('hex')}`;
      await call('PutItem', () =>
        doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: traceKeyPrefix(entry.controller, entry.key), sk, expiresAt: now + TRACE_TTL_MS, ttl: ttlSeconds(now + TRACE_TTL_MS), e: JSON.stringify(entry) },
          }),
        ),
      );
    },
    async recent(controller, key, now, limit) {
      requireName('controller', controller);
      requireName('key', key);
      const out = await call('Query', () =>
        doc.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': traceKeyPrefix(controller, key) },
            ScanIndexForward: false,
            Limit: traceLimit(limit),
            ConsistentRead: true,
          }),
        ),
      );
      // DynamoDB's TTL deletes lazily: an item past its expiry may still be returned.
      const live = (out.Items ?? []).filter((item) => (item as { expiresAt: number }).expiresAt > now);
      return live.map((item) => JSON.parse((item as { e: string }).e) as TraceEntry).reverse();
    },
  };
}
