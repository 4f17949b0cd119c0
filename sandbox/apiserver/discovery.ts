/**
 * Discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/{g}/{v}`) and `/version`, enough for
 * client-node's KubernetesObjectApi and kubectl-style clients.
 */
import { compareVersions } from './crds.ts';
import type { ResourceInfo, ResourceRegistry } from './resources.ts';

const ITEM_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The version the sandbox reports. */
export const SANDBOX_VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0-sandbox', gitCommit: 'sandbox', gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'none', compiler: 'node', platform: 'linux/amd64' };

function resourceEntries(res: ResourceInfo): object[] {
  const main: Record<string, unknown> = { name: res.resource, singularName: res.singular, namespaced: res.namespaced, kind: res.kind, verbs: ITEM_VERBS };
  if (res.shortNames) main.shortNames = res.shortNames;
  if (res.categories) main.categories = res.categories;
  const out: object[] = [main];
  const sub = (name: string, kind: string, verbs: string[], gv?: { group: string; version: string }): void => {
    out.push({ name: `${res.resource}/${name}`, singularName: '', namespaced: res.namespaced, ...(gv ?? {}), kind, verbs });
  };
  if (res.status) sub('status', res.kind, ['get', 'patch', 'update']);
  if (res.scale) sub('scale', 'Scale', ['get', 'patch', 'update'], { group: 'autoscaling', version: 'v1' });
  for (const name of res.subresources ?? []) {
    // kubectl drain reads the group/version of pods/eviction from here to pick the Eviction API.
    if (name === 'eviction') sub(name, 'Eviction', ['create'], { group: 'policy', version: 'v1' });
    else if (name === 'binding') sub(name, 'Binding', ['create']);
    else if (name === 'log') sub(name, res.kind, ['get']);
    else sub(name, res.kind, ['update']);
  }
  return out;
}

/** The discovery answer for `path`, or undefined when it is not a discovery path. */
export function discovery(registry: ResourceRegistry, path: string, serverAddress: string): object | undefined {
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 1 && parts[0] === 'api') {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }
  const groupOf = (group: string): object => {
    const versions = registry.groupVersions().filter((gv) => gv.group === group).sort((a, b) => compareVersions(a.version, b.version)).map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
    return { name: group, versions, preferredVersion: versions[0] };
  };
  if (parts.length === 1 && parts[0] === 'apis') {
    const groups = [...new Set(registry.groupVersions().map((gv) => gv.group).filter(Boolean))];
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(groupOf) };
  }
  if (parts.length === 2 && parts[0] === 'apis' && registry.groupVersions().some((gv) => gv.group === parts[1])) {
    return { kind: 'APIGroup', apiVersion: 'v1', ...groupOf(parts[1]!) };
  }
  const gv = parts[0] === 'api' && parts.length === 2 ? { group: '', version: parts[1]! } : parts[0] === 'apis' && parts.length === 3 ? { group: parts[1]!, version: parts[2]! } : undefined;
  if (!gv) return undefined;
  const resources = registry.all.filter((r) => r.group === gv.group && r.version === gv.version);
  if (resources.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv.group ? `${gv.group}/${gv.version}` : gv.version, resources: resources.flatMap(resourceEntries) };
}
