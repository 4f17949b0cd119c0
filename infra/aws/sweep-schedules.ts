/**
 * The controllers' sweeps on AWS (shared/reconcile/sweep.ts, docs/controllers.md "Sweeps"): per
 * registry entry with a `sweep`, one EventBridge Scheduler schedule `rate(<period>)` in the
 * stack's schedule group, whose target sends the sweep timer (`sweepTimerBody`) to that
 * controller's **timer queue**. The timer forwarder validates it like any timer and forwards it
 * to the FIFO queue with a deduplication id per scheduled instant; the controller's function
 * lists and sends one key per object.
 *
 * Why the timer queue and not the FIFO queue: Scheduler can send to a FIFO queue only with
 * content-based deduplication, which the key queues do not use (the relay sends its own ids), and
 * the forwarder is the one place that already turns a due timer into a key message. An invocation
 * Scheduler cannot deliver within one period (after its retries) goes to the timer queue's DLQ,
 * which is alarmed on already; a later sweep is due by then anyway.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { sweeps } from '../../shared/controllers.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { sweepTimerBody } from '../../shared/reconcile/sweep.ts';
import type { ControllerQueue } from './controller-queue.ts';

export interface SweepSchedulesProps {
  readonly prefix: string;
  readonly queues: readonly ControllerQueue[];
}

/** Scheduler's `rate()` counts whole minutes at the finest. */
export function sweepRate(periodSeconds: number): string {
  if (!Number.isInteger(periodSeconds / 60) || periodSeconds < 60) throw new Error(`a sweep period must be whole minutes, got ${periodSeconds} s`);
  const minutes = periodSeconds / 60;
  return `rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`;
}

export class SweepSchedules extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly schedules: ReadonlyMap<Controller, scheduler.Schedule>;

  constructor(scope: Construct, id: string, props: SweepSchedulesProps) {
    super(scope, id);
    this.group = new scheduler.ScheduleGroup(this, 'Group', { scheduleGroupName: `${props.prefix}-sweeps` });
    const byController = new Map(props.queues.map((q) => [q.controller, q]));
    const schedules = new Map<Controller, scheduler.Schedule>();
    for (const { controller, sweep } of sweeps()) {
      const q = byController.get(controller);
      if (!q) throw new Error(`no queues for swept controller ${controller}`);
      schedules.set(
        controller,
        new scheduler.Schedule(this, `Sweep-${controller}`, {
          scheduleName: `${props.prefix}-${controller}-sweep`,
          description: `virt-reconciler: the ${controller} controller's sweep (lists ${sweep.lists.plural}, one key each)`,
          scheduleGroup: this.group,
          schedule: scheduler.ScheduleExpression.expression(sweepRate(sweep.periodSeconds)),
          target: new targets.SqsSendMessage(q.timers, {
            input: scheduler.ScheduleTargetInput.fromText(sweepTimerBody(controller)),
            deadLetterQueue: q.timersDlq,
            // A sweep older than its period is superseded by the next one.
            maxEventAge: Duration.seconds(Math.max(60, sweep.periodSeconds)),
            retryAttempts: 3,
          }),
        }),
      );
    }
    this.schedules = schedules;
  }

  widgets(): cloudwatch.IWidget[] {
    const sum = { period: Duration.minutes(1), statistic: 'Sum' };
    return [
      new cloudwatch.GraphWidget({
        title: 'sweep schedules: invocations / target errors / dropped / to DLQ',
        left: [
          this.group.metricAttempts({ ...sum, label: 'invocations' }),
          this.group.metricTargetErrors({ ...sum, label: 'target errors' }),
          this.group.metricDropped({ ...sum, label: 'dropped' }),
          this.group.metricSentToDLQ({ ...sum, label: 'sent to DLQ' }),
        ],
        width: 12,
      }),
    ];
  }
}
