/**
 * The migration object a controller creates for a VMI (evacuation, workload update): one shape,
 * so every controller that asks for a migration spells it the same way.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from './index.ts';

/** What differs between the controllers that create migrations. */
export interface MigrationRequest {
  readonly generateName: string;
  readonly priority: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>> | undefined;
}

/** A `VirtualMachineInstanceMigration` of `vmi`, in its namespace, named by `generateName`. */
export function migrationFor(vmi: VirtualMachineInstance, request: MigrationRequest): VirtualMachineInstanceMigration {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: {
      generateName: request.generateName,
      namespace: vmi.metadata?.namespace ?? '',
      annotations: { ...request.annotations },
      ...(request.labels ? { labels: { ...request.labels } } : {}),
    },
    spec: { vmiName: vmi.metadata?.name ?? '', priority: request.priority },
  } as VirtualMachineInstanceMigration;
}
