/**
 * virt-controller's own gauges: `kubevirt_virt_controller_ready_status` (the process is up and
 * ready to take the lead) and `kubevirt_virt_controller_leading_status` (it is the one operating).
 * KubeVirt's rules alert on both (NoReadyVirtController, NoLeadingVirtController). Written at
 * scrape time from a {@link ComponentState}, so the rule deciding "leading" is one function.
 */
import { COMPONENT } from './catalog.ts';
import type { ExpositionWriter, MetricsCollector } from '../exposition.ts';

/** What the gauges report. */
export interface ComponentState {
  /** Started and not stopping. */
  readonly running: boolean;
  /** Every watched resource has been listed once: keys flow to the controllers. */
  readonly synced: boolean;
}

/**
 * Whether this process counts as the leading virt-controller. Today: it runs and its watches have
 * synced, so keys reach the controllers. Holding virt-controller's Lease (the cutover, issue 34)
 * replaces this one function.
 */
export function isLeading(s: ComponentState): boolean {
  return s.running && s.synced;
}

/** Whether this process is ready to take the lead: it runs (KubeVirt sets it before leader election). */
export function isReady(s: ComponentState): boolean {
  return s.running;
}

/** The two gauges, from `state` at each scrape. */
export function componentCollector(state: () => ComponentState, leading: (s: ComponentState) => boolean = isLeading): MetricsCollector {
  return {
    collect(out: ExpositionWriter): void {
      const s = state();
      out.family(COMPONENT.leading);
      out.sample(COMPONENT.leading.name, [], [], leading(s) ? 1 : 0);
      out.family(COMPONENT.ready);
      out.sample(COMPONENT.ready.name, [], [], isReady(s) ? 1 : 0);
    },
  };
}
