/**
 * Basic Kubernetes validation of a rendered pod — the checks the apiserver would reject a
 * broken pod for: names, label syntax, quantities, unique container/volume names, mounts that
 * reference existing volumes. Returns the problems found (empty = valid).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseQuantity } from '../../shared/api/quantity.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function qualifiedNameProblems(key: string): string[] {
  const parts = key.split('/');
  const name = parts.length === 2 ? parts[1] ?? '' : parts[0] ?? '';
  const prefix = parts.length === 2 ? parts[0] ?? '' : undefined;
  const out: string[] = [];
  if (parts.length > 2) out.push(`key '${key}' has more than one '/'`);
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) out.push(`key '${key}': bad name part`);
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) out.push(`key '${key}': bad prefix`);
  return out;
}

export function validatePod(pod: V1Pod): string[] {
  const problems: string[] = [];
  const meta = pod.metadata ?? {};
  const gen = meta.generateName ?? '';
  // generateName gets 5 random characters appended; the result must be a DNS-1123 subdomain.
  // (the apiserver cuts the prefix to 58 characters first).
  const generated = `${gen.slice(0, 58)}abcde`;
  if (!meta.name && !DNS1123_SUBDOMAIN.test(generated)) problems.push(`generateName '${gen}' is not a DNS-1123 prefix`);
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    problems.push(...qualifiedNameProblems(k));
    if (v.length > 63 || !LABEL_VALUE.test(v)) problems.push(`label ${k}: bad value '${v}'`);
  }
  for (const k of Object.keys(meta.annotations ?? {})) problems.push(...qualifiedNameProblems(k));
  const spec = pod.spec;
  if (!spec) return [...problems, 'no spec'];
  if (spec.hostname !== undefined && !DNS1123_LABEL.test(spec.hostname)) problems.push(`hostname '${spec.hostname}' is not a DNS-1123 label`);
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) {
    problems.push(...qualifiedNameProblems(k));
    if (!LABEL_VALUE.test(v)) problems.push(`nodeSelector ${k}: bad value`);
  }
  const volumeNames = new Set<string>();
  for (const v of spec.volumes ?? []) {
    if (!DNS1123_LABEL.test(v.name) || v.name.length > 63) problems.push(`volume name '${v.name}' is not a DNS-1123 label`);
    if (volumeNames.has(v.name)) problems.push(`duplicate volume '${v.name}'`);
    volumeNames.add(v.name);
  }
  const containers: V1Container[] = [...spec.containers, ...(spec.initContainers ?? [])];
  const names = new Set<string>();
  for (const c of containers) {
    if (!DNS1123_LABEL.test(c.name)) problems.push(`container name '${c.name}' is not a DNS-1123 label`);
    if (names.has(c.name)) problems.push(`duplicate container '${c.name}'`);
    names.add(c.name);
    const paths = new Set<string>();
    for (const m of c.volumeMounts ?? []) {
      if (!volumeNames.has(m.name)) problems.push(`${c.name}: mount of unknown volume '${m.name}'`);
      if (paths.has(m.mountPath)) problems.push(`${c.name}: duplicate mount path ${m.mountPath}`);
      paths.add(m.mountPath);
    }
    for (const d of c.volumeDevices ?? []) if (!volumeNames.has(d.name)) problems.push(`${c.name}: device of unknown volume '${d.name}'`);
    for (const kind of ['requests', 'limits'] as const) {
      for (const [r, q] of Object.entries(c.resources?.[kind] ?? {})) {
        try {
          if (parseQuantity(q).nanos < 0n) problems.push(`${c.name}: negative ${kind}.${r}`);
        } catch {
          problems.push(`${c.name}: ${kind}.${r} '${q}' is not a quantity`);
        }
      }
    }
  }
  return problems;
}
