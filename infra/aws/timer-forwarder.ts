/**
 * The requeue-after forwarder (shared/queue/timer-forwarder.ts, docs/queue.md): one Lambda with
 * an SQS trigger on every controller's standard timer queue. It forwards a due timer to the
 * controller's FIFO queue, or re-delays a timer longer than SQS's 15-minute DelaySeconds on its
 * own timer queue. It makes no Kubernetes call, so it is outside the apiserver budget.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { BundledFunction } from './bundled-function.ts';
import type { ControllerQueue } from './controller-queue.ts';
import { MIN_SQS_MAX_CONCURRENCY, type ReconcilerSettings } from './settings.ts';

export interface TimerForwarderProps {
  readonly assetDir: string;
  readonly queues: readonly ControllerQueue[];
  readonly settings: ReconcilerSettings;
}

/** Its timeout; the timer queues' visibility timeout (180 s) is 6× it. */
export const FORWARDER_TIMEOUT_SECONDS = 30;

export class TimerForwarder extends Construct {
  readonly fn: lambda.Function;

  constructor(scope: Construct, id: string, props: TimerForwarderProps) {
    super(scope, id);
    const env: Record<string, string> = {};
    for (const q of props.queues) {
      const C = q.controller.toUpperCase();
      env[`QUEUE_URL_${C}`] = q.queue.queueUrl;
      env[`TIMER_QUEUE_URL_${C}`] = q.timers.queueUrl;
    }
    const bundled = new BundledFunction(this, 'Bundled', {
      assetDir: props.assetDir,
      functionName: `${props.settings.prefix}-timer-forwarder`,
      description: 'virt-reconciler: forwards due requeue-after timers to the controllers\' FIFO queues',
      memoryMb: 256,
      timeoutSeconds: FORWARDER_TIMEOUT_SECONDS,
      logRetentionDays: props.settings.logRetentionDays,
      ...(props.settings.vpc !== undefined ? { vpc: props.settings.vpc } : {}),
      environment: env,
    });
    this.fn = bundled.fn;
    for (const q of props.queues) {
      this.fn.addEventSource(
        new sources.SqsEventSource(q.timers, {
          batchSize: 10,
          maxBatchingWindow: Duration.seconds(1),
          reportBatchItemFailures: true,
          maxConcurrency: MIN_SQS_MAX_CONCURRENCY,
        }),
      );
    }
    // Forward to the FIFO queues; re-delay long timers on the timer queues. Nothing else.
    bundled.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: props.queues.flatMap((q) => [q.queue.queueArn, q.timers.queueArn]) }),
    );
  }

  widgets(): cloudwatch.IWidget[] {
    const sum = { period: Duration.minutes(1), statistic: 'Sum' };
    return [
      new cloudwatch.GraphWidget({
        title: 'timer forwarder: invocations / errors / throttles',
        left: [this.fn.metricInvocations(sum), this.fn.metricErrors(sum), this.fn.metricThrottles(sum)],
        width: 12,
      }),
    ];
  }
}
