/**
 * One controller scenario (controller-scenarios.ts) on a chaos rig (rig.ts): the rig started with
 * the controllers the scenario needs, the scenario driven under every fault, then calm, and the
 * dead-letter queue read — nothing may be there (these scenarios have no poison).
 */
import { DEFINITIONS } from '../../functions/registry.ts';
import type { DeadLetter } from '../../shared/queue/port.ts';
import { SCENARIOS, type Scenario } from './controller-scenarios.ts';
import { startRig } from './rig.ts';
import type { ChaosBackend } from './store.ts';

export interface ControllerChaosOptions {
  readonly seed?: number;
  readonly backend?: ChaosBackend;
  readonly killRate?: number;
  readonly progress?: (line: string) => void;
}

export interface ControllerChaosReport {
  readonly scenario: string;
  readonly seed: number;
  readonly backend: ChaosBackend;
  readonly seconds: number;
  readonly checked: string;
  readonly injected: Record<string, number>;
  readonly deadLetters: readonly DeadLetter[];
  readonly violations: string[];
}

/** The scenario called `name`, or an error naming the known ones. */
export function scenarioNamed(name: string): Scenario {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no chaos scenario "${name}"; known: ${SCENARIOS.map((x) => x.name).join(', ')}`);
  return s;
}

export async function runControllerChaos(scenario: Scenario, opts: ControllerChaosOptions = {}): Promise<ControllerChaosReport> {
  const t0 = performance.now();
  const say = opts.progress ?? (() => {});
  const rig = await startRig({
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    backend: opts.backend ?? 'sqlite',
    ...((opts.killRate ?? scenario.killRate) !== undefined ? { killRate: opts.killRate ?? scenario.killRate } : {}),
    controllers: scenario.controllers,
    ...(scenario.sandbox ? { sandbox: scenario.sandbox } : {}),
  });
  try {
    await scenario.prepare?.(rig.user);
    await rig.start();
    const result = await scenario.run(rig, say);
    await rig.calm();
    // A key still retrying after the faults stopped settles within a few backoffs.
    await new Promise((r) => setTimeout(r, 2000));
    const deadLetters = await rig.store.queue.listDeadLetters();
    const violations = [...result.violations];
    if (deadLetters.length) violations.push(`dead-lettered by chaos alone: ${deadLetters.map((d) => `${d.controller} ${d.key} (${d.reason}: ${d.message})`).join('; ')}`);
    const injected = rig.injected();
    if (!injected.workerKills) violations.push('no worker was killed: the run proved nothing');
    return { scenario: scenario.name, seed: rig.seed, backend: rig.store.backend, seconds: Math.round((performance.now() - t0) / 100) / 10, checked: result.checked, injected, deadLetters, violations };
  } finally {
    await rig.stop();
  }
}

/** Every registered controller is in some scenario or in the VMI, replica set or drain runs. */
export function controllersWithoutChaos(): string[] {
  const covered = new Set<string>(['vmi', 'replicaset', 'migration', 'evacuation', 'workload-updater', ...SCENARIOS.flatMap((s) => s.controllers)]);
  return DEFINITIONS.map((d) => d.name).filter((c) => !covered.has(c));
}
