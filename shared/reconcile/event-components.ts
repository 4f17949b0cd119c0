/**
 * The Event `source.component` of each controller, as KubeVirt's virt-controller names its event
 * recorders (one per controller; the VMI and migration controllers share the VM controller's).
 * `kubectl get events` and anything filtering on the source tell the controllers apart by it.
 */
export const EVENT_COMPONENT = {
  vmi: 'virtualmachine-controller',
  vm: 'virtualmachine-controller',
  migration: 'virtualmachine-controller',
  node: 'node-controller',
  replicaset: 'virtualmachinereplicaset-controller',
  pool: 'virtualmachinepool-controller',
  disruptionBudget: 'disruptionbudget-controller',
  workloadUpdater: 'workload-update-controller',
  evacuation: 'evacuation-controller',
  snapshot: 'snapshot-controller',
  restore: 'restore-controller',
  export: 'export-controller',
  clone: 'clone-controller',
  backup: 'backup-controller',
} as const;

/** One of KubeVirt's event source components. */
export type EventComponent = (typeof EVENT_COMPONENT)[keyof typeof EVENT_COMPONENT];
