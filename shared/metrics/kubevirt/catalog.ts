/**
 * KubeVirt's virt-controller metrics as operators know them: name, type, help text and label
 * names, exactly as KubeVirt registers them (docs/operations.md, "KubeVirt's metrics", has the
 * table of where each comes from here). Collectors and the per-reconcile instrumentation write
 * through these definitions, so a name or label can only be spelled once.
 */

/** One metric family: what `# HELP` / `# TYPE` say and the label names every series carries. */
export interface KubevirtMetric {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  readonly help: string;
  readonly labels: readonly string[];
  /** Histograms only: upper bounds, seconds. */
  readonly buckets?: readonly number[];
}

const NAME_NAMESPACE = ['name', 'namespace'] as const;

/** KubeVirt's phase-transition buckets: 0.5 s … 1 h. */
export const PHASE_TRANSITION_BUCKETS: readonly number[] = [0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 300, 600, 1200, 1800, 3600];

/** client-go workqueue buckets as KubeVirt sets them: 10 ns × 10^k, ten of them (10 ns … 10 s). */
export const WORKQUEUE_BUCKETS: readonly number[] = Array.from({ length: 10 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** REST request latency buckets (those of the apiserver's request duration). */
export const REST_LATENCY_BUCKETS: readonly number[] = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** Client-side rate limiter buckets: 1 ms doubling, ten of them. */
export const RATE_LIMITER_BUCKETS: readonly number[] = Array.from({ length: 10 }, (_, i) => 0.001 * 2 ** i);

function gauge(name: string, help: string, labels: readonly string[] = []): KubevirtMetric {
  return { name, type: 'gauge', help, labels };
}
function counter(name: string, help: string, labels: readonly string[] = []): KubevirtMetric {
  return { name, type: 'counter', help, labels };
}
function histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[]): KubevirtMetric {
  return { name, type: 'histogram', help, labels, buckets };
}

const VNIC_LABELS = ['name', 'namespace', 'vnic_name', 'binding_type', 'network', 'binding_name', 'model'] as const;

/** The component's own gauges. */
export const COMPONENT = {
  leading: gauge('kubevirt_virt_controller_leading_status', 'Indication for an operating virt-controller.'),
  ready: gauge('kubevirt_virt_controller_ready_status', 'Indication for a virt-controller that is ready to take the lead.'),
  outdated: gauge(
    'kubevirt_vmi_number_of_outdated',
    'Indication for the total number of VirtualMachineInstance workloads that are not running within the most up-to-date version of the virt-launcher environment.',
  ),
} as const;

/** The VMI collector (one scrape over the VMIs the relay knows). */
export const VMI = {
  info: gauge('kubevirt_vmi_info', 'Information about VirtualMachineInstances.', [
    'node', 'namespace', 'name', 'phase', 'os', 'workload', 'flavor', 'instance_type', 'preference',
    'guest_os_kernel_release', 'guest_os_machine', 'guest_os_arch', 'guest_os_name', 'guest_os_version_id',
    'evictable', 'outdated', 'vmi_pod',
  ]),
  nonEvictable: gauge('kubevirt_vmi_non_evictable', 'Indication for a VirtualMachine that its eviction strategy is set to Live Migration but is not migratable.', ['node', 'namespace', 'name']),
  addresses: gauge(
    'kubevirt_vmi_status_addresses',
    "The addresses of a VirtualMachineInstance. This metric provides the address of an available network interface associated with the VMI in the 'address' label, and about the type of address, such as internal IP, in the 'type' label.",
    ['node', 'namespace', 'name', 'vnic_name', 'interface_name', 'address', 'type'],
  ),
  migrationStart: gauge('kubevirt_vmi_migration_start_time_seconds', 'The time at which the migration started.', ['node', 'namespace', 'name', 'migration_name']),
  migrationEnd: gauge('kubevirt_vmi_migration_end_time_seconds', 'The time at which the migration ended.', ['node', 'namespace', 'name', 'migration_name', 'status']),
  vnicInfo: gauge(
    'kubevirt_vmi_vnic_info',
    'Details of VirtualMachineInstance (VMI) vNIC interfaces, such as vNIC name, binding type, network name, and binding name for each vNIC of a running instance.',
    VNIC_LABELS,
  ),
  memoryOverhead: gauge(
    'kubevirt_vmi_launcher_memory_overhead_bytes',
    "Estimation of the memory amount required for virt-launcher's infrastructure components (e.g. libvirt, QEMU).",
    ['namespace', 'name'],
  ),
} as const;

/** The VM collector. The status timestamps are counters in KubeVirt (hence no `_total`). */
export const VM = {
  startingTimestamp: counter('kubevirt_vm_starting_status_last_transition_timestamp_seconds', 'Virtual Machine last transition timestamp to starting status.', NAME_NAMESPACE),
  runningTimestamp: counter('kubevirt_vm_running_status_last_transition_timestamp_seconds', 'Virtual Machine last transition timestamp to running status.', NAME_NAMESPACE),
  migratingTimestamp: counter('kubevirt_vm_migrating_status_last_transition_timestamp_seconds', 'Virtual Machine last transition timestamp to migrating status.', NAME_NAMESPACE),
  nonRunningTimestamp: counter('kubevirt_vm_non_running_status_last_transition_timestamp_seconds', 'Virtual Machine last transition timestamp to paused/stopped status.', NAME_NAMESPACE),
  errorTimestamp: counter('kubevirt_vm_error_status_last_transition_timestamp_seconds', 'Virtual Machine last transition timestamp to error status.', NAME_NAMESPACE),
  resourceRequests: gauge('kubevirt_vm_resource_requests', 'Resources requested by Virtual Machine. Reports memory and CPU requests.', ['name', 'namespace', 'resource', 'unit', 'source']),
  resourceLimits: gauge('kubevirt_vm_resource_limits', 'Resource limits set for a Virtual Machine. Reports CPU and memory limits only when they are defined.', ['name', 'namespace', 'resource', 'unit']),
  info: gauge('kubevirt_vm_info', 'Information about Virtual Machines.', ['name', 'namespace', 'os', 'workload', 'flavor', 'machine_type', 'instance_type', 'preference', 'status', 'status_group']),
  diskAllocatedSize: gauge(
    'kubevirt_vm_disk_allocated_size_bytes',
    'Allocated disk size of a Virtual Machine in bytes, based on its PersistentVolumeClaim. Includes persistentvolumeclaim (PVC name), volume_mode (disk presentation mode: Filesystem or Block), and device (disk name).',
    ['name', 'namespace', 'persistentvolumeclaim', 'volume_mode', 'device'],
  ),
  creationTimestamp: gauge('kubevirt_vm_create_date_timestamp_seconds', 'Virtual Machine creation timestamp.', NAME_NAMESPACE),
  vnicInfo: gauge(
    'kubevirt_vm_vnic_info',
    "Details of Virtual Machine (VM) vNIC interfaces, such as vNIC name, binding type, network name, and binding name for each vNIC defined in the VM's configuration.",
    VNIC_LABELS,
  ),
  labels: gauge(
    'kubevirt_vm_labels',
    "The metric exposes the VM labels as Prometheus labels. Configure allowed and ignored labels via the 'kubevirt-vm-labels-config' ConfigMap.",
    NAME_NAMESPACE,
  ),
} as const;

/** The status-timestamp counters in KubeVirt's order (one series each per VM, the current group's set). */
export const VM_STATUS_TIMESTAMPS = [VM.startingTimestamp, VM.runningTimestamp, VM.migratingTimestamp, VM.nonRunningTimestamp, VM.errorTimestamp] as const;

/** The migration collector. */
export const MIGRATION = {
  pending: gauge('kubevirt_vmi_migrations_in_pending_phase', 'Number of current pending migrations.'),
  scheduling: gauge('kubevirt_vmi_migrations_in_scheduling_phase', 'Number of current scheduling migrations.'),
  unset: gauge('kubevirt_vmi_migrations_in_unset_phase', 'Number of current unset migrations. These are pending items the virt-controller hasn’t processed yet from the queue.'),
  running: gauge('kubevirt_vmi_migrations_in_running_phase', 'Number of current running migrations.'),
  succeeded: gauge('kubevirt_vmi_migration_succeeded', 'Indicates if the VMI migration succeeded.', ['vmi', 'vmim', 'namespace']),
  failed: gauge('kubevirt_vmi_migration_failed', 'Indicates if the VMI migration failed.', ['vmi', 'vmim', 'namespace']),
} as const;

/** Histograms fed by watch updates that change a phase (KubeVirt's informer handlers). */
export const TRANSITIONS = {
  vmiPhase: histogram('kubevirt_vmi_phase_transition_time_seconds', 'Histogram of VM phase transitions duration between different phases in seconds.', ['phase', 'last_phase'], PHASE_TRANSITION_BUCKETS),
  vmiFromCreation: histogram('kubevirt_vmi_phase_transition_time_from_creation_seconds', 'Histogram of VM phase transitions duration from creation time in seconds.', ['phase'], PHASE_TRANSITION_BUCKETS),
  vmiFromDeletion: histogram('kubevirt_vmi_phase_transition_time_from_deletion_seconds', 'Histogram of VM phase transitions duration from deletion time in seconds.', ['phase'], PHASE_TRANSITION_BUCKETS),
  migrationFromCreation: histogram(
    'kubevirt_vmi_migration_phase_transition_time_from_creation_seconds',
    'Histogram of VM migration phase transitions duration from creation time in seconds.',
    ['phase'],
    PHASE_TRANSITION_BUCKETS,
  ),
} as const;

/** Set by the snapshot controller when a snapshot succeeds. */
export const SNAPSHOT = {
  succeededTimestamp: gauge('kubevirt_vmsnapshot_succeeded_timestamp_seconds', 'Returns the timestamp of successful virtual machine snapshot.', ['name', 'snapshot_name', 'namespace']),
} as const;

/** Per-controller queue metrics (client-go's workqueue metrics, KubeVirt's prefix). */
export const WORKQUEUE = {
  depth: gauge('kubevirt_workqueue_depth', 'Current depth of workqueue', ['name']),
  adds: counter('kubevirt_workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']),
  queueDuration: histogram('kubevirt_workqueue_queue_duration_seconds', 'How long an item stays in workqueue before being requested.', ['name'], WORKQUEUE_BUCKETS),
  workDuration: histogram('kubevirt_workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.', ['name'], WORKQUEUE_BUCKETS),
  retries: counter('kubevirt_workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']),
  longestRunning: gauge('kubevirt_workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', ['name']),
  unfinishedWork: gauge(
    'kubevirt_workqueue_unfinished_work_seconds',
    'How many seconds of work have been in progress without being observed by work_duration. Large values indicate stuck threads. The number of stuck threads can be deduced by observing the rate at which this value increases.',
    ['name'],
  ),
} as const;

/** Kubernetes API requests (client-go's REST client metrics, KubeVirt's names). */
export const REST_CLIENT = {
  requestLatency: histogram('kubevirt_rest_client_request_latency_seconds', 'Request latency in seconds. Broken down by verb and URL.', ['verb', 'url'], REST_LATENCY_BUCKETS),
  rateLimiterLatency: histogram('kubevirt_rest_client_rate_limiter_duration_seconds', 'Client side rate limiter latency in seconds. Broken down by verb and URL.', ['verb', 'url'], RATE_LIMITER_BUCKETS),
  requests: counter('kubevirt_rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', ['code', 'method', 'host', 'resource', 'verb']),
} as const;

/** VMI status writes by the VMI controller. */
export const VMI_SYNC = {
  total: counter('kubevirt_vmi_sync_total', 'Total number of times a VirtualMachineInstance has been synced.', ['namespace', 'name']),
} as const;

/** Every metric virt-controller registers, in no particular order. */
export const KUBEVIRT_METRICS: readonly KubevirtMetric[] = [
  ...Object.values(COMPONENT),
  ...Object.values(VMI),
  ...Object.values(VM),
  ...Object.values(MIGRATION),
  ...Object.values(TRANSITIONS),
  ...Object.values(SNAPSHOT),
  ...Object.values(WORKQUEUE),
  ...Object.values(REST_CLIENT),
  ...Object.values(VMI_SYNC),
];
