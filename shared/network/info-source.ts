/**
 * `status.interfaces[].infoSource`: a comma-space list of who reports the interface — `domain`,
 * `guest-agent`, `multus-status` (KubeVirt's `vmispec/infosource.go`). Pure.
 */
export const INFO_SOURCE_DOMAIN = 'domain';
export const INFO_SOURCE_GUEST_AGENT = 'guest-agent';
export const INFO_SOURCE_MULTUS_STATUS = 'multus-status';

const SEPARATOR = ', ';

function split(sources: string | undefined): string[] {
  return (sources ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

export function hasInfoSource(sources: string | undefined, name: string): boolean {
  return split(sources).includes(name);
}

/** `sources` with `name` appended (unchanged when present). */
export function addInfoSource(sources: string | undefined, name: string): string {
  const list = split(sources);
  return list.includes(name) ? list.join(SEPARATOR) : [...list, name].join(SEPARATOR);
}

/** `sources` without `name`; undefined when nothing is left. */
export function removeInfoSource(sources: string | undefined, name: string): string | undefined {
  const list = split(sources).filter((s) => s !== name);
  return list.length > 0 ? list.join(SEPARATOR) : undefined;
}
