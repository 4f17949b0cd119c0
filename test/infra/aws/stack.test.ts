import assert from 'node:assert/strict';
import { CONTROLLERS, controllerInfo, sweeps, wakeDelayMs } from '../../../shared/controllers.ts';
import { sweepTimerBody } from '../../../shared/reconcile/sweep.ts';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { bundleResolver } from '../../../infra/aws/bundles.ts';
import { DEFAULT_BATCH_SIZE, DEFAULT_BUDGET, planConcurrency } from '../../../infra/aws/settings.ts';

/** Controllers in the registry: every count below follows from it. */
const N = CONTROLLERS.length;
import { buildStack, fixtureDist, removeTemps, resourcesOf } from './support.ts';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };

let dist = '';
let template: Template;
before(() => {
  dist = fixtureDist();
  template = buildStack({ bundle: bundleResolver(dist) }).template;
});
after(() => {
  rmSync(dist, { recursive: true, force: true });
  removeTemps();
});

describe('ReconcilerStack: queues', () => {
  test('per controller a FIFO key queue and a FIFO DLQ (dedup ids from the relay, so no content-based dedup), SSE, names as sqs-queue.ts', () => {
    for (const c of CONTROLLERS) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `virt-reconciler-${c}.fifo`,
        FifoQueue: true,
        ContentBasedDeduplication: false,
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        SqsManagedSseEnabled: true,
        // ≥ 6 × the 60 s function timeout (AWS guidance for SQS event sources)
        VisibilityTimeout: 360,
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 1000 },
        // The registry's wake delay (the pool's 1 s, KubeVirt's AddAfter); none elsewhere.
        DelaySeconds: wakeDelayMs(c) > 0 ? wakeDelayMs(c) / 1000 : Match.absent(),
      });
      template.hasResourceProperties('AWS::SQS::Queue', { QueueName: `virt-reconciler-${c}-dlq.fifo`, FifoQueue: true, ContentBasedDeduplication: false, SqsManagedSseEnabled: true });
      template.hasResourceProperties('AWS::SQS::Queue', { QueueName: `virt-reconciler-${c}-timers`, SqsManagedSseEnabled: true, RedrivePolicy: Match.objectLike({ maxReceiveCount: 10 }) });
    }
    // and shadow mode's channel from the functions to the relay (shared/cutover/shadow-channel.ts)
    template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'virt-reconciler-shadow.fifo', FifoQueue: true, ContentBasedDeduplication: false, SqsManagedSseEnabled: true, MessageRetentionPeriod: 3600 });
    template.resourceCountIs('AWS::SQS::Queue', 4 * N + 1);
  });

  test('every FIFO queue redrives to a FIFO DLQ (a standard DLQ would fail at deploy)', () => {
    const queues = resourcesOf(template, 'AWS::SQS::Queue');
    const byId = new Map(queues.map((q) => [q.id, q.props]));
    const redriving = queues.filter((q) => q.props.RedrivePolicy !== undefined);
    assert.equal(redriving.length, 2 * N, 'every key queue and timer queue has a DLQ');
    for (const q of redriving) {
      const target = ((q.props.RedrivePolicy as { deadLetterTargetArn: { 'Fn::GetAtt': [string, string] } }).deadLetterTargetArn)['Fn::GetAtt'][0];
      assert.equal(byId.get(target)?.FifoQueue === true, q.props.FifoQueue === true, `${q.id} → ${target}: FIFO-ness must match`);
    }
  });

  test('every queue denies non-TLS access', () => {
    for (const p of resourcesOf(template, 'AWS::SQS::QueuePolicy')) {
      assert.match(JSON.stringify(p.props), /aws:SecureTransport/);
    }
  });
});

describe('ReconcilerStack: functions', () => {
  test('reconcile functions: Node 24 on arm64, index.handler, 512 MB, 60 s, JSON logs, queue/table env by the documented names', () => {
    for (const c of CONTROLLERS) {
      const C = c.toUpperCase();
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `virt-reconciler-${c}`,
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 512,
        Timeout: 60,
        LoggingConfig: Match.objectLike({ LogFormat: 'JSON' }),
        Environment: {
          Variables: Match.objectLike({
            [`QUEUE_URL_${C}`]: Match.anyValue(),
            [`DLQ_URL_${C}`]: Match.anyValue(),
            [`TIMER_QUEUE_URL_${C}`]: Match.anyValue(),
            STATE_TABLE_NAME: Match.anyValue(),
            SHADOW_QUEUE_URL: Match.anyValue(),
            POWERTOOLS_METRICS_NAMESPACE: 'VirtReconciler',
            NODE_OPTIONS: '--enable-source-maps',
          }),
        },
      });
    }
    template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'virt-reconciler-timer-forwarder', Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler', Timeout: 30 });
    template.resourceCountIs('AWS::Lambda::Function', N + 1);
  });

  test('event sources: partial batch responses and maxConcurrency from the 200 QPS budget; forwarder on every timer queue', () => {
    const esms = resourcesOf(template, 'AWS::Lambda::EventSourceMapping');
    assert.equal(esms.length, 2 * N);
    for (const e of esms) assert.deepEqual(e.props.FunctionResponseTypes, ['ReportBatchItemFailures'], `${e.id}: without it one failure redelivers the whole batch`);
    const reconcile = esms.filter((e) => JSON.stringify(e.props.EventSourceArn).includes('Queue') && !JSON.stringify(e.props.EventSourceArn).includes('Timers'));
    // Logical ids drop the '-' of names such as workload-updater.
    const byId = new Map(CONTROLLERS.map((c) => [c.replaceAll('-', ''), c]));
    const concurrency = reconcile.map((e) => [byId.get(JSON.stringify(e.props.EventSourceArn).match(/Queue(\w+?)Queue/)?.[1] ?? ''), (e.props.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency]);
    // Batch 10, its keys one at a time: the plan of one reconcile in flight per instance.
    assert.deepEqual(Object.fromEntries(concurrency), planConcurrency(DEFAULT_BUDGET, 10, 1).maxConcurrency);
    assert.deepEqual(Object.fromEntries(concurrency), planConcurrency(DEFAULT_BUDGET, 1).maxConcurrency);
    for (const e of reconcile) assert.equal(e.props.BatchSize, DEFAULT_BATCH_SIZE);
  });

  test('IAM: no wildcard action or resource, no managed policy; each function consumes only its own queue', () => {
    for (const p of resourcesOf(template, 'AWS::IAM::Policy')) {
      const statements = (p.props.PolicyDocument as { Statement: Statement[] }).Statement;
      for (const s of statements) {
        const actions = ([] as string[]).concat(s.Action);
        for (const a of actions) assert.ok(!a.includes('*'), `${p.id}: wildcard action ${a}`);
        assert.ok(!JSON.stringify(s.Resource).includes('"*"'), `${p.id}: wildcard resource in ${JSON.stringify(s)}`);
        assert.equal(s.Effect, 'Allow');
      }
    }
    for (const r of resourcesOf(template, 'AWS::IAM::Role')) assert.equal(r.props.ManagedPolicyArns, undefined, `${r.id}: managed policies carry Resource "*"`);
    const relay = resourcesOf(template, 'AWS::IAM::Policy').find((p) => p.id.startsWith('RelayRole'))!;
    const relayStatements = (relay.props.PolicyDocument as { Statement: Statement[] }).Statement;
    assert.deepEqual(relayStatements.map((s) => s.Action), ['sqs:SendMessage', ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], 'dynamodb:UpdateItem'], 'the relay sends keys; in shadow mode it consumes decisions and writes divergences');
    assert.equal(JSON.stringify(relayStatements[0]!.Resource).match(/Queue\w+?Queue/g)?.length, N, 'to every FIFO key queue');
    assert.match(JSON.stringify(relayStatements[1]!.Resource), /ShadowQueue/, 'decisions from the shadow queue only');
    assert.deepEqual(relayStatements[2]!.Condition, { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['shadowdiv'] } }, 'divergence items only');
    for (const name of CONTROLLERS) {
      // Logical ids drop the '-' of names such as disruption-budget.
      const c = name.replaceAll('-', '');
      const policy = resourcesOf(template, 'AWS::IAM::Policy').find((p) => p.id.startsWith(`Reconcile${c}Bundled`))!;
      const statements = (policy.props.PolicyDocument as { Statement: Statement[] }).Statement;
      const receive = statements.filter((s) => ([] as string[]).concat(s.Action).includes('sqs:ReceiveMessage'));
      assert.equal(receive.length, 1);
      assert.match(JSON.stringify(receive[0]!.Resource), new RegExp(`Queue${c}Queue`), `${c} may receive only from its own queue`);
      const send = statements.find((s) => ([] as string[]).concat(s.Action).includes('sqs:SendMessage'))!;
      assert.deepEqual(JSON.stringify(send.Resource).match(/Queue\w+?(Timers|Dlq)/g)?.sort(), [`Queue${c}Dlq`, `Queue${c}Timers`].sort());
      // A swept controller sends the keys its sweep lists to its own queue; no other controller may.
      assert.equal(new RegExp(`Queue${c}Queue`).test(JSON.stringify(send.Resource)), controllerInfo(name).sweep !== undefined, `${name}: own queue in SendMessage iff it has a sweep`);
      assert.ok(statements.some((s) => ([] as string[]).concat(s.Action).includes('sqs:SendMessage') && /ShadowQueue/.test(JSON.stringify(s.Resource))), `${name} may send its shadow decisions`);
      const ddb = statements.find((s) => ([] as string[]).concat(s.Action).some((a) => a.startsWith('dynamodb:')))!;
      assert.deepEqual(([] as string[]).concat(ddb.Action).sort(), ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    }
  });
});

describe('ReconcilerStack: sweep schedules', () => {
  /** The logical id of a queue, by its name. */
  const queueId = (name: string): string => resourcesOf(template, 'AWS::SQS::Queue').find((q) => q.props.QueueName === name)!.id;

  test('one EventBridge Scheduler schedule per registry entry with a sweep, at its period, sending the sweep timer to that controller\'s timer queue', () => {
    assert.ok(sweeps().length > 0);
    template.resourceCountIs('AWS::Scheduler::Schedule', sweeps().length);
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'virt-reconciler-sweeps' });
    for (const { controller, sweep } of sweeps()) {
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        Name: `virt-reconciler-${controller}-sweep`,
        GroupName: Match.anyValue(),
        State: 'ENABLED',
        ScheduleExpression: sweep.periodSeconds === 60 ? 'rate(1 minute)' : `rate(${sweep.periodSeconds / 60} minutes)`,
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: { 'Fn::GetAtt': [queueId(`virt-reconciler-${controller}-timers`), 'Arn'] },
          Input: sweepTimerBody(controller),
          RoleArn: Match.anyValue(),
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId(`virt-reconciler-${controller}-timers-dlq`), 'Arn'] } },
          RetryPolicy: { MaximumEventAgeInSeconds: sweep.periodSeconds, MaximumRetryAttempts: 3 },
        },
      });
    }
  });

  test('each schedule\'s role is assumed by EventBridge Scheduler only and may only send to its timer queue and that queue\'s DLQ', () => {
    const byName = new Map(resourcesOf(template, 'AWS::Scheduler::Schedule').map((s) => [s.props.Name, s.props]));
    for (const { controller } of sweeps()) {
      const target = byName.get(`virt-reconciler-${controller}-sweep`)!.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } };
      const roleId = target.RoleArn['Fn::GetAtt'][0];
      const role = resourcesOf(template, 'AWS::IAM::Role').find((r) => r.id === roleId)!;
      assert.match(JSON.stringify(role.props.AssumeRolePolicyDocument), /scheduler\.amazonaws\.com/);
      const statements = resourcesOf(template, 'AWS::IAM::Policy')
        .filter((p) => JSON.stringify(p.props.Roles).includes(roleId))
        .flatMap((p) => (p.props.PolicyDocument as { Statement: Statement[] }).Statement);
      assert.deepEqual([...new Set(statements.flatMap((s) => ([] as string[]).concat(s.Action)))], ['sqs:SendMessage']);
      const resources = statements.flatMap((s) => ([] as unknown[]).concat(s.Resource)).map((r) => (r as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]).sort();
      assert.deepEqual(resources, [queueId(`virt-reconciler-${controller}-timers`), queueId(`virt-reconciler-${controller}-timers-dlq`)].sort(), 'never a FIFO key queue (Scheduler cannot give it dedup ids)');
    }
  });

  test('the dashboard graphs the schedules\' invocations, target errors, drops and dead letters', () => {
    const body = JSON.stringify(resourcesOf(template, 'AWS::CloudWatch::Dashboard')[0]!.props.DashboardBody);
    for (const name of ['AWS/Scheduler', 'InvocationAttemptCount', 'TargetErrorCount', 'InvocationDroppedCount', 'InvocationsSentToDeadLetterCount', 'virt-reconciler-sweeps']) assert.ok(body.includes(name), `dashboard lacks ${name}`);
  });
});

describe('ReconcilerStack: table, alarms, dashboard', () => {
  test('state table: pk/sk, on demand, TTL on ttl, point-in-time recovery, retained', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        TableName: 'virt-reconciler-state',
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
    });
  });

  test('alarms: DLQ not empty, timer DLQ not empty and oldest key age, per controller', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 3 * N);
    for (const c of CONTROLLERS) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: `virt-reconciler-${c}-dlq-not-empty`, MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: `virt-reconciler-${c}-timers-dlq-not-empty`, MetricName: 'ApproximateNumberOfMessagesVisible' });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: `virt-reconciler-${c}-oldest-key-age`, MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 300, EvaluationPeriods: 3 });
    }
  });

  test('dashboard shows queue depth, age, DLQ depth, function health and our EMF reconcile metrics', () => {
    const body = JSON.stringify(resourcesOf(template, 'AWS::CloudWatch::Dashboard')[0]!.props.DashboardBody);
    for (const name of [
      'ApproximateNumberOfMessagesVisible',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateAgeOfOldestMessage',
      'Invocations',
      'Errors',
      'Throttles',
      'Duration',
      'ConcurrentExecutions',
      'reconcile_total',
      'reconcile_time_seconds',
      'api_calls_per_reconcile',
      'dead-lettered',
      'kubevirt_vmi_number_of_outdated',
    ]) {
      assert.ok(body.includes(name), `dashboard lacks ${name}`);
    }
    assert.ok(body.includes('VirtReconciler'), 'EMF namespace');
  });
});
