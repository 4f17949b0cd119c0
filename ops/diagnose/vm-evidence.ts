/**
 * Gathers what the VM verdict needs (vm-verdicts.ts): the VM, its dead letters and traces, and
 * its VMI's diagnosis when there is a VMI. Reads only.
 */
import type { VirtualMachine } from '../../shared/api/index.ts';
import { VMIS, VMS } from '../../shared/api/resources.ts';
import type { VmEvidence, VmView } from './vm-verdicts.ts';
import { conditionView } from './views.ts';
import { gatherVmiEvidence, type EvidenceSources } from './vmi-evidence.ts';
import { diagnoseVmi } from './vmi-verdicts.ts';

export async function gatherVmEvidence(src: EvidenceSources, namespace: string, name: string): Promise<VmEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, vmi, deadLetters, traces] = await Promise.all([
    src.cluster.get(VMS, namespace, name),
    src.cluster.get(VMIS, namespace, name),
    src.queue.listDeadLetters({ key }),
    src.state.traces.recent('vm', key, src.now),
  ]);
  const base = { now: src.now, key, deadLetters: deadLetters.filter((d) => d.controller === 'vm'), traces };
  const vmiDiagnosis = vmi ? diagnoseVmi(await gatherVmiEvidence(src, namespace, name)) : undefined;
  return { ...base, ...(raw ? { vm: vmView(raw) } : {}), ...(vmiDiagnosis ? { vmi: vmiDiagnosis } : {}) };
}

export function vmView(raw: VirtualMachine): VmView {
  const spec = raw.spec ?? {};
  const runStrategy = spec.runStrategy ?? (spec.running === true ? 'Always' : spec.running === false ? 'Halted' : 'Halted');
  return {
    name: raw.metadata?.name ?? '',
    resourceVersion: raw.metadata?.resourceVersion ?? '',
    runStrategy,
    printableStatus: raw.status?.printableStatus ?? '',
    conditions: (raw.status?.conditions ?? []).map((c) => conditionView(c as Parameters<typeof conditionView>[0])),
  };
}
