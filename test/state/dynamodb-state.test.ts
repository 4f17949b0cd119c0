/**
 * The conformance suite against the DynamoDB StateStore on DynamoDB Local (one emulator for this
 * file, two SDK clients = two connection pools). When Java or the emulator is missing, the
 * before() hook fails with the install command: these tests fail, they never skip.
 */
import assert from 'node:assert/strict';
import { DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { packedItemWrus, packTraceEntries } from '../../shared/state/dynamodb-traces.ts';
import { traceEntry } from './conformance-traces.ts';
import { after, before, describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { ensureTable, openDynamoDbState, STATE_TABLE_ENV } from '../../shared/state/dynamodb-state.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';
import { GC_GRACE_MS } from '../../shared/state/validate.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { registerStateConformance } from './conformance.ts';

const TABLE = 'virt-reconciler-state';
let ddb: DynamoDbLocal | undefined;
let started: Promise<DynamoDbLocal> | undefined;

/** One emulator for the whole file, started by whichever suite asks first. */
function emulator(): Promise<DynamoDbLocal> {
  started ??= startDynamoDbLocal().then(async (d) => {
    ddb = d;
    const client = d.client();
    await ensureTable(client, TABLE);
    client.destroy();
    return d;
  });
  return started;
}

after(async () => {
  await ddb?.stop();
});

// A test of its own, not only a hook: a failing before() merely "cancels" the suites' tests,
// and a missing emulator must show up in the closing `fail N` line that CI reads.
test('DynamoDB Local is installed and answers (else: npx node scripts/dynamodb-local.ts install)', async () => {
  await emulator();
});

registerStateConformance('dynamodb (DynamoDB Local), two clients', async () => {
  const d = await emulator();
  return {
    open: async () => openDynamoDbState({ tableName: TABLE, client: d.client() }),
    close: async () => {},
  };
});

describe('dynamodb state: beyond the conformance suite', () => {
  let client: DynamoDBClient | undefined;
  before(async () => {
    client = (await emulator()).client();
  });
  after(() => client?.destroy());

  test('ensureTable is idempotent and enables TTL on `ttl`', async () => {
    // arrange
    const c = client as DynamoDBClient;
    // act
    await ensureTable(c, TABLE);
    const ttl = await c.send(new DescribeTimeToLiveCommand({ TableName: TABLE }));
    // assert
    assert.equal(ttl.TimeToLiveDescription?.AttributeName, 'ttl');
    assert.equal(ttl.TimeToLiveDescription?.TimeToLiveStatus, 'ENABLED');
  });

  test('an expectation item carries ttl = epoch seconds of its expiry plus the GC grace', async () => {
    // arrange
    const store = openDynamoDbState({ tableName: TABLE, client: client as DynamoDBClient });
    const now = Math.floor(Date.now() / 1000) * 1000;
    // act
    await store.expectations.expectCreations('ttl-check', 'ns/vmi', 1, now);
    const raw = await DynamoDBDocumentClient.from(client as DynamoDBClient).send(
      new GetCommand({ TableName: TABLE, Key: { pk: 'exp#ttl-check', sk: 'ns/vmi' }, ConsistentRead: true }),
    );
    // assert
    assert.equal(raw.Item?.ttl, (now + EXPECTATIONS_TIMEOUT_MS + GC_GRACE_MS) / 1000);
    await store.close();
  });

  test(`without a table name or ${STATE_TABLE_ENV}, opening fails with InvalidInputError`, () => {
    // arrange
    const saved = process.env[STATE_TABLE_ENV];
    delete process.env[STATE_TABLE_ENV];
    try {
      // act + assert
      assert.throws(() => openDynamoDbState({ client: client as DynamoDBClient }), InvalidInputError);
    } finally {
      if (saved !== undefined) process.env[STATE_TABLE_ENV] = saved;
    }
  });

  test('an unreachable endpoint surfaces as a TransientError (retry with backoff), not a raw SDK error', async () => {
    // arrange
    const { DynamoDBClient: Client } = await import('@aws-sdk/client-dynamodb');
    const dead = new Client({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    const store = openDynamoDbState({ tableName: TABLE, client: dead });
    // act + assert
    await assert.rejects(store.expectations.satisfied('s', 'ns/vmi', Date.now()), (err: unknown) => {
      assert.equal((err as { name?: string }).name, 'TransientError');
      assert.equal((err as { reason?: string }).reason, 'StateStoreError');
      return true;
    });
    dead.destroy();
  });

  test('a batch of 10 reconciles is one packed trace item of at most 2 write units (10 items, one unit each, before)', () => {
    // arrange: entries the size the trace benchmark measures (≈ 500 bytes of JSON each)
    const t = Date.now();
    const entries = Array.from({ length: 10 }, (_, i) =>
      traceEntry('vmi', `default/vmi-bench-${String(i).padStart(4, '0')}`, t + i, {
        writes: [
          { verb: 'create', resource: 'pods', namespace: 'default', name: `virt-launcher-vmi-bench-${i}-x7k2p`, code: 201 },
          { verb: 'update', resource: 'virtualmachineinstances/status', namespace: 'default', name: `vmi-bench-${i}`, code: 200 },
        ],
      }),
    );
    // act
    const items = packTraceEntries(entries, t + 100);
    // assert
    assert.ok(entries.every((e) => JSON.stringify(e).length > 400), 'realistic entries');
    assert.equal(items.length, 1);
    assert.ok(packedItemWrus(items[0]!) <= 2, `${packedItemWrus(items[0]!)} WRU`);
  });

  test('trace items of the earlier layout (one per reconcile) are still read, older than the packed ones', async () => {
    // arrange
    const doc = DynamoDBDocumentClient.from(client as DynamoDBClient);
    const store = openDynamoDbState({ tableName: TABLE, client: client as DynamoDBClient });
    const t = Date.now();
    const controller = `vmi-legacy-${t}`;
    const old = traceEntry(controller, 'ns/a', t - 60_000, { attempt: 1 });
    await doc.send(new PutCommand({ TableName: TABLE, Item: { pk: `trace#${controller}#ns/a`, sk: `${String(old.receivedAt).padStart(15, '0')}#0000`, expiresAt: t + 3_600_000, ttl: 0, e: JSON.stringify(old) } }));
    const fresh = traceEntry(controller, 'ns/a', t, { attempt: 2 });
    await store.traces.recordBatch([fresh], t + 1);
    // act
    const got = await store.traces.recent(controller, 'ns/a', t + 2);
    // assert
    assert.deepEqual(got.map((e) => e.attempt), [1, 2]);
  });
});

