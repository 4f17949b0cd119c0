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
  /**
   * Whether we hold virt-controller's Lease and may write (docs/cutover.md); undefined where no
   * cutover runs (tests of the relay alone): then running and synced is leading.
   */
  readonly holdsLease?: boolean | undefined;
}

/**
 * Whether this process counts as the leading virt-controller: it runs, its watches have synced (keys
 * reach the controllers), and it holds virt-controller's Lease — as KubeVirt's leader sets the
 * gauge when it starts leading. In shadow mode, or fenced beside a live virt-controller, it is 0.
 */
export function isLeading(s: ComponentState): boolean {
  return s.running && s.synced && s.holdsLease !== false;
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
