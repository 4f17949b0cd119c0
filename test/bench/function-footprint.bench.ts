/**
 * What one Lambda instance of the VMI function uses (issue 17, goal 6: the memory setting the
 * cost rests on): the real bundle (`npm run build`'s Lambda build of functions/vmi) in a process
 * of its own, configured by environment only, with the real AWS SDK against fauxqs and DynamoDB
 * Local and the node:http Kubernetes client against a sandbox in its own child process. The real
 * relay feeds the VMI key queue; this process plays the SQS trigger: it receives up to B keys,
 * invokes the instance with them (one invocation at a time, as a Lambda instance runs them) and
 * deletes what the batch response does not name as failed — until a burst of N VMIs is Running.
 *
 * Three rounds (FOOTPRINT_ROUNDS in cost-model.ts), each with KEY_BATCH_CONCURRENCY set as the CDK
 * stack sets it from `-c batchConcurrency`: batch 1; batch 10 with its keys one after another
 * (concurrency 1, the deployed default); batch 10 with its keys all at once (concurrency 10).
 * Per round: keys per invocation, the invocation's wall time and CPU time (the
 * instance does nothing else, so its process CPU delta is the invocation's), and the instance's
 * peak resident memory, after the import and at the end, the bytes it logs per key (what
 * CloudWatch Logs would ingest) and the write units of the packed trace items it wrote (read
 * back from the table, sized by the layout's `packedItemWrus`). Lambda gives a function CPU in
 * proportion to its memory (a full vCPU at 1,769 MB), so the CPU time is what a smaller memory
 * setting stretches; report.ts turns these into the cost at each memory size.
 *
 * N = BENCH_FOOTPRINT_VMIS (default 200; 50 with BENCH_QUICK). Never a test.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { Relay } from '../../functions/relay/relay.ts';
import { buildBundles } from '../../scripts/build.ts';
import { CONTROLLERS } from '../../shared/controllers.ts';
import { BATCH_CONCURRENCY_ENV } from '../../shared/queue/batch-concurrency.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { queueNames, SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { ensureTable } from '../../shared/state/dynamodb-state.ts';
import { packedItemWrus, type PackedTraceItem } from '../../shared/state/dynamodb-traces.ts';
import { queueUrlEnv, startLocalSqs } from '../queue/fauxqs.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.ts';
import { localLambdaEnv } from '../support/lambda-env.ts';
import { sqsRecord } from '../support/sqs-event.ts';
import { FOOTPRINT_ROUNDS, type FootprintRound } from './cost-model.ts';
import { startCluster } from './support/cluster.ts';
import type { InstanceReady, InvocationFigures, InvokeRequest } from './support/function-instance.ts';
import { CONTROLLER_IDENTITY, createVmis, USER_IDENTITY, vmiNames, VmiTracker } from './support/vmi-run.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.BENCH_FOOTPRINT_VMIS ?? (QUICK ? 50 : 200));
const INSTANCE = fileURLToPath(new URL('./support/function-instance.ts', import.meta.url));
const TABLE = 'footprint-state';

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const MB = 1024 * 1024;

interface RoundFigures {
  invocations: number;
  keys: number;
  wallMs: number[];
  cpuMs: number[];
  keysPer: number[];
  importMs: number;
  rssAfterImportMb: number;
  maxRssMb: number;
  heapUsedMaxMb: number;
  /** Bytes the instance logged (what CloudWatch Logs ingests), the import's excluded. */
  logBytes: number;
  /** The packed trace items the instance wrote: their write units and the entries they hold. */
  traceWrus: number;
  traceEntries: number;
  allRunning: boolean;
  seconds: number;
}

/** The write units of the packed trace items in the table (a fresh one per round) and the entries they hold. */
async function traceItems(dynamo: DynamoDbLocal): Promise<{ wrus: number; entries: number }> {
  const ddb = dynamo.client();
  const doc = DynamoDBDocumentClient.from(ddb);
  let wrus = 0;
  let entries = 0;
  try {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await doc.send(new ScanCommand({ TableName: TABLE, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': 'tracebatch#' }, ...(start ? { ExclusiveStartKey: start } : {}) }));
      for (const item of (out.Items ?? []) as PackedTraceItem[]) {
        wrus += packedItemWrus(item);
        entries += (JSON.parse(inflateRawSync(item.z).toString('utf8')) as unknown[]).length;
      }
      start = out.LastEvaluatedKey;
    } while (start);
  } finally {
    ddb.destroy();
  }
  return { wrus, entries };
}

async function oneRound(bundleDir: string, config: FootprintRound, index: number): Promise<RoundFigures> {
  const { batchSize } = config;
  const cluster = await startCluster({ vmis: N, identities: [CONTROLLER_IDENTITY, USER_IDENTITY] });
  const [sqs, dynamo] = await Promise.all([startLocalSqs(), startDynamoDbLocal()]);
  const prefix = `fp${index}`;
  const queue = new SqsKeyQueue({ client: sqs.client(), prefix });
  const tracker = new VmiTracker(cluster);
  let relay: Relay | undefined;
  const instance = fork(INSTANCE, [], {
    // BENCH_FOOTPRINT_PROF=<dir>: a V8 CPU profile of the instance, for finding where its CPU goes.
    execArgv: process.env.BENCH_FOOTPRINT_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_FOOTPRINT_PROF}`] : [],
    // Its JSON log lines (and EMF metrics) are what Lambda sends to CloudWatch Logs: counted, not shown.
    // (stdout and stderr alike: Lambda ships both; the logger writes its lines to stderr).
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: await (async () => {
      await queue.ensureQueues([...CONTROLLERS]);
      const ddb = dynamo.client();
      await ensureTable(ddb, TABLE);
      ddb.destroy();
      const kc = cluster.kubeConfig(CONTROLLER_IDENTITY);
      return {
        ...localLambdaEnv({ apiServer: kc.getCurrentCluster()?.server ?? '', token: kc.getCurrentUser()?.token ?? '', queuePrefix: prefix, queueUrls: await queueUrlEnv(sqs, prefix), table: TABLE, sqsEndpoint: sqs.endpoint, dynamoEndpoint: dynamo.endpoint, functionName: 'virt-reconciler-vmi' }),
        BUNDLE_URL: pathToFileURL(join(bundleDir, 'vmi', 'index.mjs')).href,
        // As infra/aws/reconcile-function.ts sets it from `-c batchConcurrency` (the stack always sets it).
        [BATCH_CONCURRENCY_ENV]: String(config.keyConcurrency),
      };
    })(),
  });
  let logBytes = 0;
  const stderrTail: string[] = [];
  instance.stdout?.on('data', (chunk: Buffer) => (logBytes += chunk.length));
  instance.stderr?.on('data', (chunk: Buffer) => {
    logBytes += chunk.length;
    stderrTail.push(chunk.toString('utf8'));
    if (stderrTail.length > 20) stderrTail.shift();
  });
  const waiting = new Map<number, (f: InvocationFigures) => void>();
  const ready = new Promise<InstanceReady>((resolve, reject) => {
    instance.once('exit', (code) => reject(new Error(`the function instance exited (${code}) before it was ready:\n${stderrTail.join('')}`)));
    instance.on('message', (m: InstanceReady | InvocationFigures) => {
      if (m.kind === 'ready') resolve(m);
      else waiting.get(m.id)?.(m);
    });
  });
  const invoke = (req: InvokeRequest) => new Promise<InvocationFigures>((resolve) => {
    waiting.set(req.id, resolve);
    instance.send(req);
  });
  const f: RoundFigures = { invocations: 0, keys: 0, wallMs: [], cpuMs: [], keysPer: [], importMs: 0, rssAfterImportMb: 0, maxRssMb: 0, heapUsedMaxMb: 0, logBytes: 0, traceWrus: 0, traceEntries: 0, allRunning: false, seconds: 0 };
  try {
    const up = await ready;
    logBytes = 0;
    f.importMs = round(up.importMs, 1);
    f.rssAfterImportMb = round(up.rssBytes / MB, 1);
    relay = new Relay({ kubeConfig: cluster.kubeConfig(CONTROLLER_IDENTITY), queue, log: silentLogger });
    relay.start();
    while (!relay.ready) await new Promise((r) => setTimeout(r, 50));
    const client = sqs.client();
    const QueueName = queueNames(prefix, 'vmi').queue;
    const QueueUrl = (await client.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl ?? '';
    const t0 = Date.now();
    await createVmis(cluster, tracker, vmiNames(`fp${index}`, N), { concurrency: 25 });
    const deadline = t0 + 240_000;
    for (let id = 0; Date.now() < deadline; ) {
      if (tracker.count((m) => m.runningAt !== undefined) >= N) {
        f.allRunning = true;
        break;
      }
      const got = (await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: batchSize, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 60, WaitTimeSeconds: 0 }))).Messages ?? [];
      if (got.length === 0) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const event: SQSEvent = { Records: got.map((m) => sqsRecord(m, QueueName)) };
      const out = await invoke({ id: id++, event });
      const failed = new Set(out.response.batchItemFailures.map((b) => b.itemIdentifier));
      const done = got.filter((m) => !failed.has(m.MessageId ?? ''));
      if (done.length > 0) await client.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })) }));
      f.invocations++;
      f.keys += got.length;
      f.keysPer.push(got.length);
      f.wallMs.push(out.wallMs);
      f.cpuMs.push(out.cpuMs);
      f.maxRssMb = Math.max(f.maxRssMb, round(out.maxRssBytes / MB, 1));
      f.heapUsedMaxMb = Math.max(f.heapUsedMaxMb, round(out.heapUsedBytes / MB, 1));
    }
    f.seconds = round((Date.now() - t0) / 1000, 1);
    f.logBytes = logBytes;
    const traces = await traceItems(dynamo);
    f.traceWrus = traces.wrus;
    f.traceEntries = traces.entries;
    return f;
  } finally {
    await relay?.stop();
    tracker.stop();
    // A disconnect lets it exit by itself (and write its CPU profile, when asked for one).
    instance.disconnect();
    await new Promise((r) => instance.once('exit', r));
    await Promise.all([cluster.stop(), sqs.stop(), dynamo.stop()]);
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const bundleDir = mkdtempSync(join(tmpdir(), 'bench-footprint-'));
  try {
    await buildBundles({ only: ['vmi'], outDir: bundleDir, log: () => undefined });
    const out: Record<string, unknown> = { vmis: N };
    for (const [i, config] of FOOTPRINT_ROUNDS.entries()) {
      const f = await oneRound(bundleDir, config, i);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      const figures = {
        batchSize: config.batchSize,
        keyBatchConcurrency: config.keyConcurrency,
        invocations: f.invocations,
        keysPerInvocation: round(f.keys / Math.max(1, f.invocations), 2),
        invocationAvgMs: round(sum(f.wallMs) / Math.max(1, f.invocations), 1),
        cpuMsPerInvocation: round(sum(f.cpuMs) / Math.max(1, f.invocations), 2),
        cpuMsPerKey: round(sum(f.cpuMs) / Math.max(1, f.keys), 2),
        cpuShareOfWall: round(sum(f.cpuMs) / Math.max(1, sum(f.wallMs)), 3),
        importMs: f.importMs,
        rssAfterImportMb: f.rssAfterImportMb,
        maxRssMb: f.maxRssMb,
        heapUsedMaxMb: f.heapUsedMaxMb,
        logBytesPerKey: Math.round(f.logBytes / Math.max(1, f.keys)),
        traceWrusPerReconcile: round(f.traceWrus / Math.max(1, f.traceEntries), 3),
        allRunning: f.allRunning,
        seconds: f.seconds,
      };
      out[config.key] = figures;
      process.stdout.write(`  ${config.label}: ${figures.invocations} invocations, ${figures.keysPerInvocation} keys each, ${figures.invocationAvgMs} ms wall and ${figures.cpuMsPerInvocation} ms CPU each (${figures.cpuMsPerKey} ms CPU per key), peak RSS ${figures.maxRssMb} MB (${figures.rssAfterImportMb} MB after import), ${figures.logBytesPerKey} log bytes per key, ${figures.traceWrusPerReconcile} trace WRU per reconcile, all Running: ${figures.allRunning} in ${figures.seconds} s\n`);
    }
    return out;
  } finally {
    rmSync(bundleDir, { recursive: true, force: true });
  }
}
