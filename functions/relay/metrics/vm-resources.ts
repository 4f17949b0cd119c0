/**
 * A VM template's `kubevirt_vm_resource_requests` and `kubevirt_vm_resource_limits` series, as
 * KubeVirt's VM collector derives them: memory from the domain's requests, guest memory and
 * hugepages; CPU from the domain's topology, its requests (or KubeVirt's 1/1/1 default) and
 * limits; and the effective values after defaults (`guest_effective`).
 */
import type { CPU, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../../../shared/api/quantity.ts';

/** One series: a request (`source` set) or a limit. */
export interface ResourceSample {
  readonly limit: boolean;
  readonly resource: 'memory' | 'cpu';
  readonly unit: 'bytes' | 'cores' | 'threads' | 'sockets';
  readonly source: string;
  readonly value: number;
}

function quantity(v: unknown): Quantity | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  try {
    return parseQuantity(v as string | number);
  } catch {
    return undefined;
  }
}

const bytes = (q: Quantity | undefined): number => (q ? Number(quantityValue(q)) : 0);
const cores = (q: Quantity | undefined): number => (q ? Number(quantityMilliValue(q)) / 1000 : 0);

/** KubeVirt's vCPU count of a CPU topology: the product of the parts that are set. */
export function vcpusOf(cpu: CPU): number {
  let n = cpu.cores ?? 0;
  for (const part of [cpu.sockets ?? 0, cpu.threads ?? 0]) if (part !== 0) n = n === 0 ? part : n * part;
  return n;
}

/** Every request and limit series of `spec`, in KubeVirt's order. */
export function resourceSamples(spec: VirtualMachineInstanceSpec | undefined): ResourceSample[] {
  const out: ResourceSample[] = [];
  if (!spec) return out;
  const domain = spec.domain ?? ({} as VirtualMachineInstanceSpec['domain']);
  const requests = (domain.resources?.requests ?? {}) as Record<string, unknown>;
  const limits = (domain.resources?.limits ?? {}) as Record<string, unknown>;
  const req = (resource: ResourceSample['resource'], unit: ResourceSample['unit'], source: string, value: number) => out.push({ limit: false, resource, unit, source, value });
  const lim = (resource: ResourceSample['resource'], unit: ResourceSample['unit'], value: number) => out.push({ limit: true, resource, unit, source: '', value });

  // memory: requests, guest, hugepages (the page size, as KubeVirt reports it)
  const memRequest = quantity(requests['memory']);
  if (bytes(memRequest) !== 0) req('memory', 'bytes', 'domain', bytes(memRequest));
  const guest = quantity(domain.memory?.guest);
  if (domain.memory && bytes(guest) !== 0) req('memory', 'bytes', 'guest', bytes(guest));
  const pageSize = domain.memory?.hugepages ? quantity(domain.memory.hugepages.pageSize) : undefined;
  if (pageSize) req('memory', 'bytes', 'hugepages', bytes(pageSize));
  const memLimit = quantity(limits['memory']);
  if (bytes(memLimit) !== 0) lim('memory', 'bytes', bytes(memLimit));

  // cpu: the domain's topology
  const cpu = domain.cpu;
  if (cpu?.cores) req('cpu', 'cores', 'domain', cpu.cores);
  if (cpu?.threads) req('cpu', 'threads', 'domain', cpu.threads);
  if (cpu?.sockets) req('cpu', 'sockets', 'domain', cpu.sockets);

  // cpu: requests, or KubeVirt's default of one of each when neither requests nor a topology say
  const cpuRequest = cores(quantity(requests['cpu']));
  if (cpuRequest === 0) {
    if (!cpu) for (const unit of ['cores', 'threads', 'sockets'] as const) req('cpu', unit, 'default', 1);
  } else req('cpu', 'cores', 'requests', cpuRequest);
  const cpuLimit = cores(quantity(limits['cpu']));
  if (cpuLimit !== 0) lim('cpu', 'cores', cpuLimit);

  // effective: vCPUs of the topology (1 without one); memory: guest, else the limit when no request, else the request
  req('cpu', 'cores', 'guest_effective', cpu ? vcpusOf(cpu) : 1);
  const effective = guest ?? (requests['memory'] === undefined && memLimit ? memLimit : memRequest);
  if (bytes(effective) !== 0) req('memory', 'bytes', 'guest_effective', bytes(effective));
  return out;
}
