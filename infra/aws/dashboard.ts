/**
 * The CloudWatch dashboard (docs/operations.md): one row per controller with its queue (depth, age of
 * oldest key, dead letters) and its function (invocations/errors, duration, concurrency, our EMF
 * reconcile metrics), then the timer forwarder and the sweep schedules.
 */
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { ControllerQueue } from './controller-queue.ts';
import type { ReconcileFunction } from './reconcile-function.ts';
import type { SweepSchedules } from './sweep-schedules.ts';
import type { TimerForwarder } from './timer-forwarder.ts';

export interface ReconcilerDashboardProps {
  readonly dashboardName: string;
  readonly units: readonly { readonly queue: ControllerQueue; readonly fn: ReconcileFunction }[];
  readonly forwarder: TimerForwarder;
  readonly sweeps: SweepSchedules;
}

export class ReconcilerDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ReconcilerDashboardProps) {
    super(scope, id);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName });
    for (const u of props.units) {
      this.dashboard.addWidgets(new cloudwatch.TextWidget({ markdown: `## ${u.queue.controller}`, width: 24, height: 1 }));
      this.dashboard.addWidgets(...u.queue.widgets());
      this.dashboard.addWidgets(...u.fn.widgets());
    }
    this.dashboard.addWidgets(...props.forwarder.widgets(), ...props.sweeps.widgets());
  }
}
