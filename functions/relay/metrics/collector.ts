/**
 * KubeVirt's virt-controller collectors, computed from what the relay already watches
 * (docs/operations.md, "KubeVirt's metrics"): every watch event updates a compact record of the
 * object (the reflector itself keeps only stubs), phase changes feed the transition histograms
 * into the registry, and a scrape writes the VMI, VM and migration families from the records —
 * no API call per scrape.
 */
import type {
  KubeVirt,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
} from '../../../shared/api/index.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../../shared/config/cluster-config.ts';
import type { ExpositionWriter, MetricsCollector } from '../../../shared/metrics/exposition.ts';
import { MIGRATION } from '../../../shared/metrics/kubevirt/catalog.ts';
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { EventType, WatchedKind, WatchedObject } from '../../../shared/relay/route.ts';
import { writeVmFamilies } from './render-vm.ts';
import { writeVmiFamilies } from './render-vmi.ts';
import { ClaimIndex, keyOf, MigrationIndex, PodIndex, TypeIndex, type InstancetypeIndex, type PreferenceIndex } from './stores.ts';
import { observeMigrationTransition, observeVmiTransition } from './transitions.ts';
import { vmRecord, type VmRecord } from './vm-record.ts';
import { vmiRecord, type VmiRecord } from './vmi-record.ts';

/** Migration phases KubeVirt counts as running. */
const RUNNING_MIGRATION_PHASES = new Set(['Running', 'Scheduled', 'PreparingTarget', 'TargetReady', 'WaitingForSync', 'Synchronizing']);

export class KubevirtCollector implements MetricsCollector {
  readonly #registry: MetricsRegistry;
  readonly #vmis = new Map<string, VmiRecord>();
  readonly #vms = new Map<string, VmRecord>();
  readonly #pods = new PodIndex();
  readonly #migrations = new MigrationIndex();
  readonly #claims = new ClaimIndex();
  readonly #instancetypes: InstancetypeIndex = new TypeIndex();
  readonly #preferences: PreferenceIndex = new TypeIndex();
  #config: ClusterConfig = clusterConfigFromKubeVirt(undefined);

  /** `registry` takes the transition histograms (counted once per event, kept between scrapes). */
  constructor(registry: MetricsRegistry) {
    this.#registry = registry;
  }

  /** Objects recorded, over all kinds (memory, tests). */
  get size(): number {
    return this.#vmis.size + this.#vms.size + this.#migrations.all.size;
  }

  /** One watch event. A malformed object is the caller's to log (the relay's mapper loop does). */
  observe(kind: WatchedKind, type: EventType, obj: WatchedObject): void {
    const deleted = type === 'DELETED';
    switch (kind) {
      case 'VirtualMachineInstance': {
        const key = keyOf(obj);
        const before = this.#vmis.get(key);
        if (deleted) {
          this.#vmis.delete(key);
          return;
        }
        const vmi = obj as unknown as VirtualMachineInstance;
        if (before && type !== 'ADDED') observeVmiTransition(this.#registry, before.phase, vmi as never);
        this.#vmis.set(key, vmiRecord(vmi));
        return;
      }
      case 'VirtualMachine':
        if (deleted) this.#vms.delete(keyOf(obj));
        else this.#vms.set(keyOf(obj), vmRecord(obj as unknown as VirtualMachine));
        return;
      case 'VirtualMachineInstanceMigration': {
        const m = obj as unknown as VirtualMachineInstanceMigration;
        const before = this.#migrations.observe(deleted, m);
        if (before && !deleted && type !== 'ADDED') observeMigrationTransition(this.#registry, before.phase, m as never);
        return;
      }
      case 'Pod':
        return this.#pods.observe(deleted, obj);
      case 'PersistentVolumeClaim':
        return this.#claims.observe(deleted, obj);
      case 'KubeVirt':
        // The one KubeVirt CR configures the cluster; a deleted one leaves the defaults.
        this.#config = clusterConfigFromKubeVirt(deleted ? undefined : (obj as unknown as KubeVirt));
        return;
      case 'VirtualMachineInstancetype':
      case 'VirtualMachineClusterInstancetype':
        return this.#instancetypes.observe(kind.includes('Cluster'), deleted, obj);
      case 'VirtualMachinePreference':
      case 'VirtualMachineClusterPreference':
        return this.#preferences.observe(kind.includes('Cluster'), deleted, obj);
    }
  }

  collect(out: ExpositionWriter): void {
    this.#writeMigrations(out);
    writeVmiFamilies(out, this.#vmis.values(), {
      pods: this.#pods,
      migrations: this.#migrations,
      instancetypes: this.#instancetypes,
      preferences: this.#preferences,
      clusterEvictionStrategy: this.#config.evictionStrategy,
    });
    writeVmFamilies(out, this.#vms.values(), { claims: this.#claims, instancetypes: this.#instancetypes, preferences: this.#preferences });
  }

  /** KubeVirt's migration collector: counts by phase, and one succeeded/failed series per final migration. */
  #writeMigrations(out: ExpositionWriter): void {
    let pending = 0;
    let scheduling = 0;
    let unset = 0;
    let running = 0;
    const succeeded: string[][] = [];
    const failed: string[][] = [];
    for (const m of this.#migrations.all.values()) {
      if (m.phase === 'Pending') pending++;
      else if (m.phase === 'Scheduling') scheduling++;
      else if (m.phase === '') unset++;
      else if (RUNNING_MIGRATION_PHASES.has(m.phase)) running++;
      else if (m.phase === 'Succeeded') succeeded.push([m.vmiName, m.name, m.namespace]);
      else if (m.phase === 'Failed') failed.push([m.vmiName, m.name, m.namespace]);
    }
    for (const [def, list] of [[MIGRATION.succeeded, succeeded], [MIGRATION.failed, failed]] as const) {
      out.family(def);
      for (const labels of list) out.sample(def.name, def.labels, labels, 1);
    }
    for (const [def, n] of [[MIGRATION.pending, pending], [MIGRATION.scheduling, scheduling], [MIGRATION.unset, unset], [MIGRATION.running, running]] as const) {
      out.family(def);
      out.sample(def.name, [], [], n);
    }
  }
}
