/**
 * One controller's queues as one operational unit (docs/architecture.md §6.11), named as
 * shared/queue/sqs-queue.ts `queueNames` names them:
 *
 * - `<prefix>-<controller>.fifo`: the key queue (MessageGroupId = key; the relay sends dedup ids,
 *   so content-based deduplication is off; dedup and throughput per message group);
 * - `<prefix>-<controller>-dlq.fifo`: its DLQ (FIFO too: a FIFO queue cannot redrive to a
 *   standard one), the redrive a backstop behind our own retry/dead-letter with a reason;
 * - `<prefix>-<controller>-timers`: the standard delay queue behind requeue-after
 *   (timer-forwarder.ts), with `<prefix>-<controller>-timers-dlq` so a timer that keeps failing
 *   is kept and alarmed on rather than retried forever.
 *
 * All SSE with SQS-managed keys (no KMS grants needed). Alarms: DLQ not empty, timer DLQ not
 * empty, oldest key older than 5 minutes. Widgets for the dashboard.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { queueNames } from '../../shared/queue/sqs-queue.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { wakeDelayMs } from '../../shared/controllers.ts';

export interface ControllerQueueProps {
  readonly prefix: string;
  readonly controller: Controller;
  /** ≥ 6 × the consuming function's timeout (AWS guidance for SQS event sources). */
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
  /** Alarm when the oldest key has waited longer than this for 3 minutes (default 300 s). */
  readonly oldestAgeAlarmSeconds?: number;
}

const RETENTION = Duration.days(14);
const PERIOD = Duration.minutes(1);

export class ControllerQueue extends Construct {
  readonly controller: Controller;
  readonly queue: sqs.Queue;
  readonly dlq: sqs.Queue;
  readonly timers: sqs.Queue;
  readonly timersDlq: sqs.Queue;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: ControllerQueueProps) {
    super(scope, id);
    this.controller = props.controller;
    const names = queueNames(props.prefix, props.controller);
    this.dlq = new sqs.Queue(this, 'Dlq', {
      queueName: names.dlq,
      fifo: true,
      contentBasedDeduplication: false,
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: names.queue,
      fifo: true,
      contentBasedDeduplication: false,
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      visibilityTimeout: Duration.seconds(props.visibilityTimeoutSeconds),
      // KubeVirt's AddAfter on every wake of this controller (the registry's wakeDelaySeconds).
      ...(wakeDelayMs(props.controller) > 0 ? { deliveryDelay: Duration.seconds(wakeDelayMs(props.controller) / 1000) } : {}),
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: props.maxReceiveCount },
    });
    this.timersDlq = new sqs.Queue(this, 'TimersDlq', {
      queueName: `${names.timers}-dlq`,
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.timers = new sqs.Queue(this, 'Timers', {
      queueName: names.timers,
      // The forwarder's timeout is short; 6× it, as for every SQS event source.
      visibilityTimeout: Duration.seconds(180),
      retentionPeriod: RETENTION,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.timersDlq, maxReceiveCount: 10 },
    });

    const ageLimit = props.oldestAgeAlarmSeconds ?? 300;
    this.alarms = [
      new cloudwatch.Alarm(this, 'DlqNotEmpty', {
        alarmName: `${props.prefix}-${props.controller}-dlq-not-empty`,
        alarmDescription: `Keys of the ${props.controller} controller were dead-lettered: list with 'virt-reconciler dlq', replay with 'virt-reconciler replay'.`,
        metric: this.dlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'TimersDlqNotEmpty', {
        alarmName: `${props.prefix}-${props.controller}-timers-dlq-not-empty`,
        alarmDescription: `requeue-after timers of the ${props.controller} controller could not be forwarded (forwarder failing?).`,
        metric: this.timersDlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'OldestKeyAge', {
        alarmName: `${props.prefix}-${props.controller}-oldest-key-age`,
        alarmDescription: `A ${props.controller} key has waited more than ${ageLimit} s: functions throttled, failing or too few (maxConcurrency).`,
        metric: this.queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }),
        threshold: ageLimit,
        evaluationPeriods: 3,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    ];
  }

  /** Dashboard widgets: depth (visible / in flight / delayed timers), age of oldest key, DLQ depth. */
  widgets(): cloudwatch.IWidget[] {
    const c = this.controller;
    const max = { period: PERIOD, statistic: 'Maximum' };
    return [
      new cloudwatch.GraphWidget({
        title: `${c}: queue depth`,
        left: [
          this.queue.metricApproximateNumberOfMessagesVisible({ ...max, label: 'visible' }),
          this.queue.metricApproximateNumberOfMessagesNotVisible({ ...max, label: 'in flight' }),
          this.timers.metricApproximateNumberOfMessagesDelayed({ ...max, label: 'requeue-after timers' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: age of oldest key (s)`,
        left: [this.queue.metricApproximateAgeOfOldestMessage({ ...max, label: 'oldest' })],
        leftAnnotations: [{ value: 300, label: 'alarm', color: cloudwatch.Color.RED }],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: `${c}: dead letters`,
        left: [
          this.dlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'DLQ depth' }),
          this.timersDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'timer DLQ depth' }),
        ],
        width: 8,
      }),
    ];
  }
}
